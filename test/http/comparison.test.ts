import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { callTool, connect, apiKey, toolOk } from '../mcp/support';
import { buildSite, importAnswers, type Site, acmeAgainstGlobex } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
let site: Site;
let mcp: Client;

const PREVIOUS = { previous_start: '2026-03-01', previous_end: '2026-03-05' };
const CURRENT = { current_start: '2026-03-06', current_end: '2026-03-10' };

/**
 * Brand Acme, competitor Globex (acme-cmp / globex-cmp). Prompt p1 on chatgpt, two answers a day, March 1-10:
 *   Globex in every day's first answer; Acme in d1 both, d2 first (previous: 3 of 10, each at position 1),
 *   d6 first, d7-d10 both (current: 9 of 10; with Globex it comes second: positions 2,2,2,2,2,1,1,1,1);
 *   the current's second answers of d7-d10 cite Acme (4 of 10, previous 0).
 * Prompt p2 on claude, one answer a day March 1-4: Acme on d1 and d3 (alone, position 1).
 */
useWorld(async (ctx) => {
  ({ s, w } = ctx);
  site = await buildSite(s, w.a.key, acmeAgainstGlobex('cmp', [{ text: 'p1' }, { text: 'p2' }]));
  const [p1, p2] = site.prompts.map((p) => p.id);
  const items: object[] = [];
  for (let d = 1; d <= 10; d++) {
    const current = d >= 6;
    const acme = [d === 1 || d === 2 || d >= 6, d === 1 || d >= 7];
    for (let k = 0; k < 2; k++) {
      const globex = k === 0;
      const text =
        acme[k] && globex
          ? current
            ? 'Globex, then Acme.'
            : 'Acme, then Globex.'
          : acme[k]
            ? 'Acme alone.'
            : globex
              ? 'Globex alone.'
              : 'Nobody here.';
      const day = String(d).padStart(2, '0');
      items.push({
        prompt_id: p1,
        model: 'chatgpt',
        run_at: `2026-03-${day}T0${8 + k}:00:00Z`,
        text,
        citations: current && k === 1 && d >= 7 ? ['https://acme-cmp.example.com/pricing'] : [],
      });
    }
  }
  for (let d = 1; d <= 4; d++)
    items.push({ prompt_id: p2, model: 'claude', run_at: `2026-03-0${d}T12:00:00Z`, text: d % 2 ? 'Acme alone.' : 'Nobody here.' });
  await importAnswers(s, w.a.key, site.id, items);
  mcp = await connect(s, apiKey(w.a.key));
}, sharedServer);

afterAll(async () => mcp?.close());

const compare = (metric: string, extra: Record<string, string | undefined> = {}, key = w.a.key) =>
  call(s, 'GET', '/api/v1/metrics/compare', { key, query: { website_id: site.id, metric, ...CURRENT, ...PREVIOUS, ...extra } });

describe('GET /api/v1/metrics/compare', () => {
  it('given 3 of 10 answers mentioning the brand before and 9 of 10 after, then up by 60 points with Newcombe (17.05, 80.90)', async () => {
    const r = await compare('mention_rate', { prompt_ids: site.prompts[0].id });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({
      metric: 'mention_rate',
      current: { start_date: '2026-03-06T00:00:00.000Z', end_date: '2026-03-10T23:59:59.999Z', responses: 10 },
      previous: { start_date: '2026-03-01T00:00:00.000Z', end_date: '2026-03-05T23:59:59.999Z', responses: 10 },
      data: {
        Acme: { is_self: true, current: 90, previous: 30, change: 60, change_ci_low: 17.05, change_ci_high: 80.9, p_value: 0.0062, verdict: 'up' },
        Globex: {
          is_self: false,
          current: 50,
          previous: 50,
          change: 0,
          change_ci_low: -37.25,
          change_ci_high: 37.25,
          p_value: 1,
          verdict: 'within_noise',
        },
      },
    });
  });

  it('given every prompt, then p2 joins the previous period (5 of 14) and Globex moves within noise', async () => {
    const r = await compare('mention_rate');
    expect(r.body.previous.responses).toBe(14);
    expect(r.body.data.Acme).toEqual({
      is_self: true,
      current: 90,
      previous: 35.71,
      change: 54.29,
      change_ci_low: 14.58,
      change_ci_high: 75.32,
      p_value: 0.0078,
      verdict: 'up',
    });
    expect(r.body.data.Globex).toMatchObject({
      current: 50,
      previous: 35.71,
      change: 14.29,
      change_ci_low: -22.39,
      change_ci_high: 46.98,
      verdict: 'within_noise',
    });
  });

  it('given share of voice, citation rate and average position, then each by its own rule', async () => {
    // share of voice: Acme 9 of 14 mentions against 5 of 10
    expect((await compare('share_of_voice')).body.data.Acme).toMatchObject({
      current: 64.29,
      previous: 50,
      change: 14.29,
      p_value: 0.484,
      verdict: 'within_noise',
    });
    expect((await compare('citation_rate', { prompt_ids: site.prompts[0].id })).body.data.Acme).toEqual({
      is_self: true,
      current: 40,
      previous: 0,
      change: 40,
      change_ci_low: 3.84,
      change_ci_high: 68.73,
      p_value: 0.0253,
      verdict: 'up',
    });
    // positions 1,1,1 (and p2's 1,1) against 2,2,2,2,2,1,1,1,1: the rank number rose
    const position = (await compare('avg_position')).body.data.Acme;
    expect(position).toEqual({
      is_self: true,
      current: 1.56,
      previous: 1,
      change: 0.56,
      change_ci_low: 0.21,
      change_ci_high: 0.9,
      p_value: 0.0016,
      verdict: 'up',
    });
  });

  it('given a period without answers, then insufficient_data with nulls; the other period keeps its value', async () => {
    const r = await compare('mention_rate', { prompt_ids: site.prompts[1].id });
    expect(r.body.current.responses).toBe(0);
    expect(r.body.data.Acme).toEqual({
      is_self: true,
      current: null,
      previous: 50,
      change: null,
      change_ci_low: null,
      change_ci_high: null,
      p_value: null,
      verdict: 'insufficient_data',
    });
    // positions need two mentions in each period: Globex has none in p2
    expect((await compare('avg_position', { prompt_ids: site.prompts[1].id })).body.data.Globex).toMatchObject({
      current: null,
      previous: null,
      verdict: 'insufficient_data',
    });
  });

  it('given a saved view, then its filters apply to both periods', async () => {
    const v = await call(s, 'POST', '/api/v1/saved-views', {
      key: w.a.key,
      body: { website_id: site.id, name: 'chatgpt only', filters: { models: ['chatgpt'] } },
    });
    expect(v.status, JSON.stringify(v.body)).toBe(201);
    const r = await compare('mention_rate', { saved_view_id: v.body.view.id });
    expect(r.body.previous.responses).toBe(10);
    expect(r.body.data.Acme).toMatchObject({ current: 90, previous: 30, change: 60 });
  });

  it('given bad input, then 400 naming the field', async () => {
    const bad = async (extra: Record<string, string | undefined>, error: string | RegExp) => {
      const r = await compare(extra.metric ?? 'mention_rate', extra);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      if (typeof error === 'string') expect(r.body.error).toBe(error);
      else expect(r.body.error).toMatch(error);
    };
    await bad({ metric: 'sentiment' }, 'metric: must be one of mention_rate, share_of_voice, citation_rate, avg_position');
    await bad({ previous_start: undefined }, /^previous_start/);
    await bad({ current_start: '2026-03-10', current_end: '2026-03-06' }, /^current_end: is before current_start/);
    await bad({ previous_start: '2026-03-05', previous_end: '2026-03-01' }, /^previous_end: is before previous_start/);
    await bad({ current_end: '2150-01-01' }, 'current_end: must be between 2000-01-01 and 2099-12-31');
    await bad({ previous_start: '1999-12-31' }, 'previous_start: must be between 2000-01-01 and 2099-12-31');
    await bad({ models: 'gpt-9' }, /^models\[0\]/);
    await bad({ prompt_ids: '00000000-0000-4000-8000-000000000000' }, 'prompt_ids[0]: no prompt of this website has this id');
  });
});

describe('GET /api/v1/metrics/stability', () => {
  const stability = (extra: Record<string, string> = {}) =>
    call(s, 'GET', '/api/v1/metrics/stability', {
      key: w.a.key,
      query: { website_id: site.id, start_date: '2026-03-01', end_date: '2026-03-10', ...extra },
    });

  it('given a prompt flipping every day and one that settles, then the flipping one first and counted volatile', async () => {
    const r = await stability();
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [p1, p2] = site.prompts;
    expect(r.body).toEqual({
      data: [
        // days 1-4: mentioned, not, mentioned, not
        {
          prompt_id: p2.id,
          prompt: 'p2',
          model: 'claude',
          answers: 4,
          mentioned: 2,
          mention_rate: 50,
          ci_low: 15,
          ci_high: 85,
          days: 4,
          flips: 3,
          volatility: 1,
          consistency: 50,
        },
        // days: M (2/2), M (1/2: half counts), -, -, -, M (1/2), M, M, M, M: two flips over nine day pairs
        {
          prompt_id: p1.id,
          prompt: 'p1',
          model: 'chatgpt',
          answers: 20,
          mentioned: 12,
          mention_rate: 60,
          ci_low: 38.66,
          ci_high: 78.12,
          days: 10,
          flips: 2,
          volatility: 0.2222,
          consistency: 60,
        },
      ],
      summary: { pairs: 2, volatile_pairs: 1 },
    });
  });

  it('given the shared filters and a shorter range, then only those answers count', async () => {
    const r = await stability({ models: 'chatgpt', start_date: '2026-03-06' });
    expect(r.body.data).toEqual([
      expect.objectContaining({ model: 'chatgpt', answers: 10, mentioned: 9, days: 5, flips: 0, volatility: 0, consistency: 90 }),
    ]);
    expect(r.body.summary).toEqual({ pairs: 1, volatile_pairs: 0 });
  });

  it('given missing or inverted dates, then 400 naming the field', async () => {
    const r = await call(s, 'GET', '/api/v1/metrics/stability', { key: w.a.key, query: { website_id: site.id, start_date: '2026-03-01' } });
    expect(r).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^end_date/) } });
    expect((await stability({ end_date: '2026-02-01' })).body.error).toMatch(/^end_date: is before start_date/);
    expect((await stability({ start_date: 'yesterday' })).body.error).toMatch(/^start_date: /);
  });
});

describe('MCP compare_periods and get_prompt_stability', () => {
  it('given the REST query names as arguments, then the same answers as REST; bad input refused with the same message', async () => {
    const args = { website_id: site.id, metric: 'mention_rate', ...CURRENT, ...PREVIOUS };
    expect(await toolOk(mcp, 'compare_periods', args)).toEqual((await compare('mention_rate')).body);
    const st = { website_id: site.id, start_date: 'March 1, 2026', end_date: '2026-03-10', models: ['claude'] };
    const rest = await call(s, 'GET', '/api/v1/metrics/stability', {
      key: w.a.key,
      query: { website_id: site.id, start_date: '2026-03-01', end_date: '2026-03-10', models: 'claude' },
    });
    expect(await toolOk(mcp, 'get_prompt_stability', st)).toEqual(rest.body);
    const refused = await callTool(mcp, 'compare_periods', { ...args, metric: 'sentiment' });
    expect(refused).toMatchObject({ isError: true, structured: { status: 400 } });
  });
});

websiteTenancyChecks(() => w, 'GET', '/api/v1/metrics/compare', { metric: 'mention_rate', ...CURRENT, ...PREVIOUS });
websiteTenancyChecks(() => w, 'GET', '/api/v1/metrics/stability', { start_date: '2026-03-01', end_date: '2026-03-10' });
