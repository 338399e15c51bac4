import { z } from 'zod';
import { WebsiteView } from '../../../queries/websites/views';
import * as websites from '../../app/websites';
import { Uuid } from '../../domain/schemas';
import { tool } from '../tool';

export const websiteTools = [
  tool({
    name: 'list_websites',
    description: 'The websites (brands) this API key can reach: id, name, url, normalized_url, status, created_at.',
    input: z.object({}).strict(),
    output: z.object({ websites: z.array(WebsiteView) }),
    handler: (ctx) => websites.listWebsites(ctx),
  }),
  tool({
    name: 'get_website',
    description: 'One website by id (must be active and within the key\'s scope).',
    input: z.object({ website_id: Uuid }).strict(),
    output: z.object({ website: WebsiteView }),
    handler: (ctx, input) => websites.getWebsite(ctx, input.website_id),
  }),
];
