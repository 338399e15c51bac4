import { z } from 'zod';
import { ProvisionWebsite } from '../../../commands/websites/provision-website';
import { UpdateWebsite } from '../../../commands/websites/update-website';
import { CreateWebsite } from '../../../commands/websites/website-input';
import { Competitor, Topic, Prompt } from '../../../queries/catalog/views';
import { WebsiteView } from '../../../queries/websites/views';
import * as websites from '../../app/websites';
import { boundedString, route, Uuid } from '../route';

const WebsiteParams = z.object({ website_id: Uuid });
const OneWebsite = z.object({ website: WebsiteView });
const Websites = z.object({ websites: z.array(WebsiteView) });

export const websiteRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/websites',
    summary: 'Websites the key can reach',
    tag: 'websites',
    responses: { 200: Websites },
    handler: (ctx) => websites.listWebsites(ctx),
  }),
  route({
    method: 'POST',
    url: '/api/v1/websites',
    summary: 'Create a website',
    tag: 'websites',
    body: CreateWebsite,
    status: 201,
    responses: { 201: OneWebsite },
    handler: (ctx) => websites.createWebsite(ctx, ctx.body),
  }),
  route({
    method: 'POST',
    url: '/api/v1/websites/provision',
    summary: 'Create a website with its competitors, topics and prompts in one call',
    tag: 'websites',
    body: ProvisionWebsite,
    status: 201,
    responses: {
      201: z.object({
        website: WebsiteView,
        competitors: z.array(Competitor),
        topics: z.array(Topic.extend({ prompts: z.array(Prompt.omit({ created_at: true })) })),
        ignored_competitors: z.array(z.object({ name: z.string(), url: z.string(), reason: z.string() })),
      }),
    },
    handler: (ctx) => websites.provisionWebsite(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    url: '/api/v1/websites/by-external-id/:external_id',
    summary: "A website by the partner's own id",
    tag: 'websites',
    params: z.object({ external_id: boundedString(255) }),
    responses: { 200: OneWebsite },
    handler: (ctx) => websites.websiteByExternalId(ctx, ctx.params.external_id),
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/websites/:website_id',
    summary: 'Set or clear the external_id (partner global key; works on deleted websites); pause or resume (extension)',
    tag: 'websites',
    params: WebsiteParams,
    body: UpdateWebsite,
    responses: { 200: OneWebsite },
    handler: (ctx) => websites.updateWebsite(ctx, ctx.params.website_id, ctx.body),
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/websites/:website_id',
    summary: 'Soft-delete a website',
    tag: 'websites',
    extension: true,
    params: WebsiteParams,
    responses: { 200: z.object({ success: z.literal(true) }) },
    handler: (ctx) => websites.deleteWebsite(ctx, ctx.params.website_id),
  }),
];
