import { z } from 'zod';
import { ProvisionWebsite } from '../../../commands/websites/provision-website';
import { UpdateWebsite } from '../../../commands/websites/update-website';
import { CreateWebsite } from '../../../commands/websites/website-input';
import { Competitor, Topic, Prompt } from '../../../queries/catalog/views';
import { WebsiteView } from '../../../queries/websites/views';
import * as websites from '../../app/websites';
import { boundedString, routeGroup, Uuid } from '../route';

const api = routeGroup({ tag: 'websites' });
const WebsiteParams = z.object({ website_id: Uuid });
const OneWebsite = z.object({ website: WebsiteView });
const Websites = z.object({ websites: z.array(WebsiteView) });

export const websiteRoutes = [
  api.get('/api/v1/websites', {
    summary: 'Websites the key can reach',
    answer: Websites,
    handler: (ctx) => websites.listWebsites(ctx),
  }),
  api.post('/api/v1/websites', {
    summary: 'Create a website',
    body: CreateWebsite,
    status: 201,
    answer: OneWebsite,
    handler: (ctx) => websites.createWebsite(ctx, ctx.body),
  }),
  api.post('/api/v1/websites/provision', {
    summary: 'Create a website with its competitors, topics and prompts in one call',
    body: ProvisionWebsite,
    status: 201,
    answer: z.object({
      website: WebsiteView,
      competitors: z.array(Competitor),
      topics: z.array(Topic.extend({ prompts: z.array(Prompt.omit({ created_at: true })) })),
      ignored_competitors: z.array(z.object({ name: z.string(), url: z.string(), reason: z.string() })),
    }),
    handler: (ctx) => websites.provisionWebsite(ctx, ctx.body),
  }),
  api.get('/api/v1/websites/by-external-id/:external_id', {
    summary: "A website by the partner's own id",
    params: z.object({ external_id: boundedString(255) }),
    answer: OneWebsite,
    handler: (ctx) => websites.websiteByExternalId(ctx, ctx.params.external_id),
  }),
  api.patch('/api/v1/websites/:website_id', {
    summary: 'Set or clear the external_id (partner global key; works on deleted websites); pause or resume (extension)',
    params: WebsiteParams,
    body: UpdateWebsite,
    answer: OneWebsite,
    handler: (ctx) => websites.updateWebsite(ctx, ctx.params.website_id, ctx.body),
  }),
  api.delete('/api/v1/websites/:website_id', {
    summary: 'Soft-delete a website',
    extension: true,
    params: WebsiteParams,
    answer: z.object({ success: z.literal(true) }),
    handler: (ctx) => websites.deleteWebsite(ctx, ctx.params.website_id),
  }),
];
