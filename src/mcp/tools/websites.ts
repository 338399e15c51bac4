import { z } from 'zod';
import { requireWebsite } from '../../../queries/access';
import { listWebsites, websiteView } from '../../../queries/websites/websites';
import { WebsiteId } from '../../domain/schemas';
import { tool } from '../tool';

export const websiteTools = [
  tool({
    name: 'list_websites',
    title: 'List websites',
    annotations: { readOnlyHint: true },
    description: 'The websites (brands) this API key can reach: id, name, url, normalized_url, status, created_at.',
    input: z.object({}).strict(),
    async handler({ deps, principal }) {
      return { websites: await listWebsites(deps.rt.database.db, principal) };
    },
  }),
  tool({
    name: 'get_website',
    title: 'Get a website',
    annotations: { readOnlyHint: true },
    description: 'One website by id (must be active and within the key\'s scope).',
    input: z.object({ website_id: WebsiteId }).strict(),
    async handler({ deps, principal }, input) {
      const w = await requireWebsite(deps.rt.database.db, principal, input.website_id);
      return { website: websiteView(w, principal) };
    },
  }),
];
