import { z } from 'zod';
import { CreditsView } from '../../../queries/credits/views';
import { groupCreditsOp, organizationCreditsOp, websiteCreditsOp } from '../../app/credits';
import { route, Uuid } from '../route';

const TAG = 'credits';

/** Credit balances: thin adapters over src/app/credits.ts. */
export const creditsRoutes = [
  route({
    method: 'GET',
    url: '/api/v1/credits/organization',
    summary: "The organization's credits: the plan's monthly allowance left (with its reset) and one-off credits (global key)",
    tag: TAG,
    extension: true,
    query: z.strictObject({}),
    responses: { 200: CreditsView },
    handler: (ctx) => organizationCreditsOp(ctx),
  }),
  route({
    method: 'GET',
    url: '/api/v1/credits/website',
    summary: "Credits as a website sees them: the organization's balances, and what the website used this month",
    tag: TAG,
    extension: true,
    query: z.strictObject({ website_id: Uuid }),
    responses: { 200: CreditsView },
    handler: (ctx) => websiteCreditsOp(ctx, ctx.query.website_id),
  }),
  route({
    method: 'GET',
    url: '/api/v1/credits/group',
    summary: "Credits as a group sees them: the organization's balances, and what the group's websites used this month (global key)",
    tag: TAG,
    extension: true,
    query: z.strictObject({ group_id: Uuid }),
    responses: { 200: CreditsView },
    handler: (ctx) => groupCreditsOp(ctx, ctx.query.group_id),
  }),
];
