import { z } from 'zod';
import { WebsiteView } from '../../../queries/websites/views';
import * as websites from '../../app/websites';
import { WebsiteId } from '../../domain/schemas';
import { tool } from '../tool';

export const websiteTools = [
  tool({
    name: 'list_websites',
    title: 'List websites',
    annotations: { readOnlyHint: true },
    description: 'The websites (brands) this API key can reach: id, name, url, normalized_url, status, created_at.',
    input: z.object({}).strict(),
    output: z.object({ websites: z.array(WebsiteView) }),
    handler: (ctx) => websites.listWebsites(ctx),
  }),
  tool({
    name: 'get_website',
    title: 'Get a website',
    annotations: { readOnlyHint: true },
    description: "One website by id (must be active and within the key's scope).",
    input: z.object({ website_id: WebsiteId }).strict(),
    output: z.object({ website: WebsiteView }),
    handler: (ctx, input) => websites.getWebsite(ctx, input.website_id),
  }),
];
