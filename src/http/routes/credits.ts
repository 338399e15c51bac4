import { z } from 'zod';
import { CreditsView } from '../../../queries/credits/views';
import { groupCredits, organizationCredits, websiteCredits } from '../../app/credits';
import { type RouteContext, routeGroup, Uuid, WebsiteQuery } from '../route';

const api = routeGroup({ tag: 'credits', extension: true });

/**
 * GET /api/v1/credits/<scope>: the organization's balances as the scope sees them (the same answer, CreditsView);
 * the scopes differ in what names them (nothing, a website, a group) and in what their used_this_month counts.
 */
function balancesOf<Q extends z.ZodObject>(def: {
  scope: string;
  summary: string;
  query: Q;
  read(ctx: RouteContext<undefined, Q, undefined>): Promise<CreditsView>;
}) {
  return api.get(`/api/v1/credits/${def.scope}`, { summary: def.summary, query: def.query, answer: CreditsView, handler: def.read });
}

/** Credit balances: thin adapters over src/app/credits.ts. */
export const creditsRoutes = [
  balancesOf({
    scope: 'organization',
    summary: "The organization's credits: the plan's monthly allowance left (with its reset) and one-off credits (global key)",
    query: z.strictObject({}),
    read: (ctx) => organizationCredits(ctx),
  }),
  balancesOf({
    scope: 'website',
    summary: "Credits as a website sees them: the organization's balances, and what the website used this month",
    query: WebsiteQuery,
    read: (ctx) => websiteCredits(ctx, ctx.query.website_id),
  }),
  balancesOf({
    scope: 'group',
    summary: "Credits as a group sees them: the organization's balances, and what the group's websites used this month (global key)",
    query: z.strictObject({ group_id: Uuid }),
    read: (ctx) => groupCredits(ctx, ctx.query.group_id),
  }),
];
