import { z } from 'zod';
import { provisionWebsite, ProvisionWebsite } from '../../../commands/websites/provision-website';
import { createWebsite } from '../../../commands/websites/create-website';
import { deleteWebsite, updateWebsite, UpdateWebsite } from '../../../commands/websites/update-website';
import { CreateWebsite } from '../../../commands/websites/website-input';
import { requireGlobal, requirePartner, requireWebsite } from '../../../queries/access';
import { listWebsites, websiteByExternalId, websiteViewById } from '../../../queries/websites/websites';
import { boundedString, type Reads, route, settled, Uuid } from '../route';

/** A website is read back from the websites read model, which also admits every later call on it. */
const READS: Reads = ['websites'];
/** A new website's brand is also the first entity of its answers read model (metrics, shopping and listing read it). */
const CREATE_READS: Reads = ['websites', 'answers'];
/** Provisioning also answers with, and is followed by reads of, the competitors, topics and prompts it created. */
const PROVISION_READS: Reads = ['websites', 'catalog', 'answers'];

const WebsiteParams = z.object({ website_id: Uuid });
const Website = z.object({
  id: z.string(),
  name: z.string(),
  url: z.string(),
  normalized_url: z.string(),
  status: z.enum(['active', 'paused', 'deleted']),
  external_id: z.string().nullable().optional(),
  created_at: z.string(),
});

export const websiteRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/websites',
    summary: 'Websites the key can reach',
    tag: 'websites',
    responses: { 200: z.object({ websites: z.array(Website) }) },
    async handler({ deps, principal }) {
      return { websites: await listWebsites(deps.rt.database.db, principal) };
    },
  }),
  route({
    method: 'POST',
    url: '/api/v1/websites',
    summary: 'Create a website',
    tag: 'websites',
    body: CreateWebsite,
    status: 201,
    responses: { 201: z.object({ website: Website }) },
    async handler(ctx) {
      requireGlobal(ctx.principal);
      if (ctx.body.external_id !== undefined) requirePartner(ctx.principal);
      const result = await settled(ctx.deps, createWebsite(ctx.command(), ctx.body), CREATE_READS);
      return { website: await websiteViewById(ctx.deps.rt.database.db, ctx.principal, result.id) };
    },
  }),
  route({
    method: 'POST',
    url: '/api/v1/websites/provision',
    summary: 'Create a website with its competitors, topics and prompts in one call',
    tag: 'websites',
    body: ProvisionWebsite,
    status: 201,
    async handler(ctx) {
      requireGlobal(ctx.principal);
      if (ctx.body.external_id !== undefined) requirePartner(ctx.principal);
      const result = await settled(ctx.deps, provisionWebsite(ctx.command(), ctx.body), PROVISION_READS);
      return { ...result, website: await websiteViewById(ctx.deps.rt.database.db, ctx.principal, result.website.id) };
    },
  }),
  route({
    method: 'GET',
    url: '/api/v1/websites/by-external-id/:external_id',
    summary: "A website by the partner's own id",
    tag: 'websites',
    params: z.object({ external_id: boundedString(255) }),
    async handler({ deps, principal, params }) {
      requirePartner(principal);
      return { website: await websiteByExternalId(deps.rt.database.db, principal, params.external_id) };
    },
  }),
  route({
    method: 'PATCH',
    url: '/api/v1/websites/:website_id',
    summary: 'Set or clear the external_id (partner global key; works on deleted websites); pause or resume (extension)',
    tag: 'websites',
    params: WebsiteParams,
    body: UpdateWebsite,
    async handler(ctx) {
      const { principal, body, params } = ctx;
      if (body.external_id !== undefined) {
        requireGlobal(principal);
        requirePartner(principal);
      }
      // a paused website can be resumed; a deleted one only re-mapped
      await requireWebsite(ctx.deps.rt.database.db, principal, params.website_id, { paused: true, deleted: body.status === undefined });
      await settled(ctx.deps, updateWebsite(ctx.command(params.website_id), params.website_id, body), READS);
      return { website: await websiteViewById(ctx.deps.rt.database.db, principal, params.website_id) };
    },
  }),
  route({
    method: 'DELETE',
    url: '/api/v1/websites/:website_id',
    summary: 'Soft-delete a website',
    tag: 'websites',
    extension: true,
    params: WebsiteParams,
    async handler(ctx) {
      await requireWebsite(ctx.deps.rt.database.db, ctx.principal, ctx.params.website_id, { paused: true });
      return settled(ctx.deps, deleteWebsite(ctx.command(ctx.params.website_id), ctx.params.website_id), READS);
    },
  }),
];

