import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CreditEventsView, CreditsView, CreditUsageView } from '../../queries/credits/views';
import { CREDIT_KINDS, creditsCharged, MONTHLY_CREDITS, nextMonthlyReset } from '../../src/domain/credits';
import { grantCredits } from '../../commands/credits/grant-credits';
import { type DomainEvent, SYSTEM_ACTOR } from '../../src/domain/events';
import { callTool, toolOk, useAreaClients } from '../mcp/support';
import { testMetadata } from '../support/events';
import { caughtUp, call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client;
useAreaClients((ctx) => ({ s, w, a, scoped, b } = ctx), sharedServer);

const DAY = 86_400_000;

/** Appends credit events as the paid steps do (in a stream of their own), `ago` ms before now. */
async function charge(org: string, website: string | null, ago: number, ...events: (DomainEvent & { id?: string })[]) {
  const time = new Date(Date.now() - ago).toISOString();
  await s.rt.store.append(
    `test-credits-${randomUUID()}`,
    events.map((e) => ({
      id: e.id ?? randomUUID(),
      type: e.type,
      data: e.data,
      metadata: testMetadata({ organization_id: org, website_id: website, time }),
    })),
    'any',
  );
  return new Date(time);
}
const seo = (website: string | null, credits: number) =>
  creditsCharged({ kind: 'seo_recommendation', credits, website_id: website, ref_id: randomUUID(), step: 'analyse' });
const answer = (website: string, credits: number): DomainEvent => ({
  type: 'CreditsUsed',
  data: {
    website_id: website,
    model: 'chatgpt',
    credits,
    input_tokens: 10,
    output_tokens: 20,
    run_id: null,
    response_id: randomUUID(),
    purpose: 'response',
  },
});

describe('credits', () => {
  it('given credits of every age, when get_credit_usage asks each range, then each counts only its own period, by kind in the catalogue order, both event kinds summed', async () => {
    await charge(w.a.organization_id, w.a.a1, 2 * 3_600_000, seo(w.a.a1, 5), answer(w.a.a1, 0.5));
    await charge(w.a.organization_id, w.a.a2, 3 * DAY, seo(w.a.a2, 7));
    const d20 = await charge(w.a.organization_id, w.a.a1, 20 * DAY, answer(w.a.a1, 1.25));
    await charge(
      w.a.organization_id,
      null,
      60 * DAY,
      creditsCharged({ kind: 'pitch', credits: 40, website_id: null, ref_id: randomUUID(), step: 'report' }),
    );
    await charge(w.a.organization_id, w.a.a1, 400 * DAY, seo(w.a.a1, 100));
    await charge(w.b.organization_id, w.b.b1, 3_600_000, seo(w.b.b1, 1000));
    await caughtUp(s, ['credits']);

    const totals: Record<string, number> = { '24h': 5.5, '7d': 12.5, '30d': 13.75, '90d': 53.75, all: 153.75 };
    for (const [range, total] of Object.entries(totals)) {
      const u = CreditUsageView.parse(await toolOk(a, 'get_credit_usage', { range }));
      expect(u.total_credits, range).toBe(total);
      expect(u.range).toBe(range);
      expect(u.by_kind.map((k) => k.kind)).toEqual([...CREDIT_KINDS]);
    }
    const week = CreditUsageView.parse(await toolOk(a, 'get_credit_usage', { range: '7d' }));
    expect(week.by_kind.find((k) => k.kind === 'seo_recommendation')).toEqual({ kind: 'seo_recommendation', credits: 12, events: 2 });
    expect(week.by_kind.find((k) => k.kind === 'response')).toEqual({ kind: 'response', credits: 0.5, events: 1 });
    expect(Date.parse(week.end_at_utc) - Date.parse(week.start_at_utc!)).toBe(7 * DAY);
    const all = CreditUsageView.parse(await toolOk(a, 'get_credit_usage', { range: 'all' }));
    expect(all.start_at_utc).toBeNull();

    // one website only
    const site = CreditUsageView.parse(await toolOk(a, 'get_credit_usage', { range: '90d', website_id: w.a.a1 }));
    expect(site.total_credits).toBe(6.75);
    // explicit bounds win over the range: a window around the 20-day-old answer only
    const explicit = CreditUsageView.parse(
      await toolOk(a, 'get_credit_usage', {
        range: '24h',
        start_at_utc: new Date(d20.getTime() - 3_600_000).toISOString(),
        end_at_utc: new Date(d20.getTime() + 3_600_000).toISOString(),
      }),
    );
    expect(explicit.total_credits).toBe(1.25);
    // a window starting and ending inside one hour reads the events themselves
    const narrow = CreditUsageView.parse(
      await toolOk(a, 'get_credit_usage', {
        start_at_utc: new Date(d20.getTime() - 1000).toISOString(),
        end_at_utc: new Date(d20.getTime() + 1000).toISOString(),
      }),
    );
    expect(narrow.total_credits).toBe(1.25);
  });

  it('given bad ranges and dates, then each is a validation error naming the field', async () => {
    for (const [args, word] of [
      [{ range: '1y' }, 'range'],
      [{ start_at_utc: 'yesterday' }, 'start_at_utc'],
      [{ start_at_utc: '2026-03-05', end_at_utc: '2026-03-01' }, 'end_at_utc'],
      [{ page_size: 51 }, 'page_size'],
      [{ page_size: 0 }, 'page_size'],
      [{ next_offset: 'garbage' }, 'next_offset'],
    ] as const) {
      const r = await callTool(a, 'get_credit_usage_events', args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(r.text).toContain(word);
    }
  });

  it('given a scoped key, then both tools answer 403 global key required; another organization sees none of these credits', async () => {
    for (const name of ['get_credit_usage', 'get_credit_usage_events']) {
      const r = await callTool(scoped, name, { website_id: w.a.a2 });
      expect(r.isError).toBe(true);
      expect(r.text).toBe('Forbidden: global API key required');
      const other = await callTool(b, name, { website_id: w.a.a1 });
      expect(other.text).toBe('Unauthorized access to this website');
    }
    const bu = CreditUsageView.parse(await toolOk(b, 'get_credit_usage', { range: 'all' }));
    expect(bu.total_credits).toBe(1000);
  });

  it('given more events than a page, when paging with next_offset while new events arrive, then every event is listed once, newest first, default page 25, and the end is null', async () => {
    const site = w.a.a2;
    for (let i = 0; i < 6; i++) await charge(w.a.organization_id, site, (10 + i) * 60_000, ...Array.from({ length: 10 }, () => seo(site, 1)));
    await caughtUp(s, ['credits']);
    const first = CreditEventsView.parse(await toolOk(a, 'get_credit_usage_events', { website_id: site, range: '24h' }));
    expect(first.events).toHaveLength(25);
    expect(first.next_offset).not.toBeNull();
    // new events arrive between pages: later pages neither repeat nor skip
    await charge(w.a.organization_id, site, 0, ...Array.from({ length: 5 }, () => seo(site, 1)));
    await caughtUp(s, ['credits']);
    const seen = [...first.events];
    let offset = first.next_offset;
    while (offset) {
      const page = CreditEventsView.parse(
        await toolOk(a, 'get_credit_usage_events', { website_id: site, range: '24h', page_size: 50, next_offset: offset }),
      );
      seen.push(...page.events);
      offset = page.next_offset;
    }
    expect(seen).toHaveLength(60);
    expect(new Set(seen.map((e) => e.id)).size).toBe(60);
    const times = seen.map((e) => Date.parse(e.occurred_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);
    expect(seen[0]).toMatchObject({ kind: 'seo_recommendation', credits: 1, website_id: site });
    const fresh = CreditEventsView.parse(await toolOk(a, 'get_credit_usage_events', { website_id: site, range: '24h', page_size: 50 }));
    expect(fresh.events).toHaveLength(50);
  });

  it('given usage this month, when the balances are read, then the plan allowance minus the organization usage, the reset at the next UTC month, the scope usage', async () => {
    const org = await call(s, 'GET', '/api/v1/credits/organization', { key: w.a.key });
    expect(org.status).toBe(200);
    const v = CreditsView.parse(org.body);
    expect(v.credits.monthly.next_reset_at).toBe(nextMonthlyReset(new Date()).toISOString());
    expect(v.credits.one_off.balance).toBe(0);
    expect(v.credits.monthly.balance).toBeCloseTo(MONTHLY_CREDITS.enterprise - v.credits.used_this_month, 6);
    expect(v.credits.total).toBe(v.credits.monthly.balance + v.credits.one_off.balance);
    const site = CreditsView.parse((await call(s, 'GET', '/api/v1/credits/website', { key: w.a.scoped, query: { website_id: w.a.a2 } })).body);
    expect(site.credits.monthly.balance).toBe(v.credits.monthly.balance);
    expect(site.credits.used_this_month).toBeLessThan(v.credits.used_this_month);
    expect(site.credits.used_this_month).toBeGreaterThanOrEqual(65);
  });

  it('given the credit endpoints, then scope and tenancy hold: scoped keys reach their website only, the organization and group need a global key, other organizations 403/404', async () => {
    const get = (path: string, key: string, query?: Record<string, string>) => call(s, 'GET', `/api/v1/credits/${path}`, { key, query });
    expect((await get('organization', w.a.scoped)).body).toEqual({ error: 'Forbidden: global API key required' });
    expect((await get('website', w.a.scoped, { website_id: w.a.a1 })).status).toBe(403);
    expect((await get('website', w.b.key, { website_id: w.a.a1 })).body).toEqual({ error: 'Unauthorized access to this website' });
    expect((await get('website', w.a.key, { website_id: randomUUID() })).status).toBe(404);
    expect((await get('website', w.a.key, {})).status).toBe(400);
    expect((await get('organization', w.a.key, { extra: '1' })).status).toBe(400);
    const group = await call(s, 'POST', '/api/v1/groups', { key: w.a.key, body: { name: 'Credits group', website_ids: [w.a.a1] } });
    expect(group.status).toBe(201);
    const gid = group.body.group.id;
    const g = await get('group', w.a.key, { group_id: gid });
    expect(g.status).toBe(200);
    expect(CreditsView.parse(g.body).credits.used_this_month).toBeGreaterThanOrEqual(5.5);
    expect((await get('group', w.a.scoped, { group_id: gid })).status).toBe(403);
    expect((await get('group', w.b.key, { group_id: gid })).status).toBe(404);
    expect((await get('organization', w.a.revoked)).status).toBe(401);
  });
  it('given one-off grants, when the month uses past its allowance, then the overflow is drawn from them; the grants are in the activity feed of that organization only', async () => {
    const balances = async (key: string) => CreditsView.parse((await call(s, 'GET', '/api/v1/credits/organization', { key })).body).credits;
    const ctx = { store: s.rt.store, organizationId: w.a.organization_id, actor: SYSTEM_ACTOR };
    const g1 = await grantCredits(ctx, { credits: 100, reason: 'launch bonus' });
    const g2 = await grantCredits(ctx, { credits: 50.5 });
    if ('kind' in g1 || 'kind' in g2) throw new Error('grant refused');
    await caughtUp(s, ['credits', 'activity']);
    const before = await balances(w.a.key);
    expect(before.one_off.balance).toBe(150.5);
    expect(before.total).toBeCloseTo(before.monthly.balance + 150.5, 6);
    expect((await balances(w.b.key)).one_off.balance).toBe(0);

    // the rest of this month's allowance and 30 more
    await charge(w.a.organization_id, w.a.a1, 0, seo(w.a.a1, before.monthly.balance + 30));
    await caughtUp(s, ['credits']);
    const after = await balances(w.a.key);
    expect(after.monthly.balance).toBe(0);
    expect(after.one_off.balance).toBeCloseTo(120.5, 6);
    expect(after.total).toBeCloseTo(120.5, 6);

    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { entity_type: 'credit_grant' } });
    expect(feed.status).toBe(200);
    const ids = (feed.body as { data: { entity_ids: string[] }[] }).data.flatMap((e) => e.entity_ids);
    expect(ids.sort()).toEqual([g1.result.grant_id, g2.result.grant_id].sort());
    const other = await call(s, 'GET', '/api/v1/activity', { key: w.b.key, query: { entity_type: 'credit_grant' } });
    expect((other.body as { data: unknown[] }).data).toEqual([]);
  });
});
