import { z } from 'zod';
import { WebsiteView } from '../../../queries/websites/views';
import * as websites from '../../app/websites';
import { tool, READS, websiteRead } from '../tool';

export const websiteTools = [
  tool({
    name: 'list_websites',
    title: 'List websites',
    annotations: READS,
    description: 'The websites (brands) this API key can reach: id, name, url, normalized_url, status, created_at.',
    input: z.object({}).strict(),
    output: z.object({ websites: z.array(WebsiteView) }),
    handler: (ctx) => websites.listWebsites(ctx),
  }),
  websiteRead({
    name: 'get_website',
    title: 'Get a website',
    description: "One website by id (must be active and within the key's scope).",
    output: z.object({ website: WebsiteView }),
    read: websites.getWebsite,
  }),
];
