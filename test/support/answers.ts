import type { Knex } from 'knex';
import { expect } from 'vitest';
import { postCreated } from './http';
import { call, type TestServer } from './server';
import { until } from './until';

export interface SiteSpec {
  name?: string;
  url?: string;
  competitors?: { name: string; url: string; identifiers?: string[] }[];
  prompts?: { text: string; status?: 'active' | 'paused'; type?: 'branded' | 'non_branded' }[];
  locations?: { location: string; country: string }[];
  attributes?: { name: string; description?: string }[];
}

export interface Site {
  id: string;
  competitors: { id: string; name: string }[];
  prompts: { id: string; text: string; status: string }[];
  locations: { id: string }[];
  attributes: { id: string; name: string }[];
}

/** Acme at acme-`tag`.example.com against Globex at globex-`tag`.example.net, with one prompt p1 unless others are given. */
export const acmeAgainstGlobex = (tag: string, prompts: SiteSpec['prompts'] = [{ text: 'p1' }]): SiteSpec => ({
  name: 'Acme',
  url: `https://acme-${tag}.example.com`,
  competitors: [{ name: 'Globex', url: `https://globex-${tag}.example.net` }],
  prompts,
});

/** A website of the key's organization with its catalogue, built over HTTP. */
export async function buildSite(s: TestServer, key: string, spec: SiteSpec = {}): Promise<Site> {
  const post = (path: string, body: unknown) => postCreated(s, key, path, body);
  const w = await post('/api/v1/websites', {
    name: spec.name ?? 'Acme',
    url: spec.url ?? `https://${Math.random().toString(36).slice(2)}.acme.example.com`,
  });
  const website_id = w.website.id as string;
  const site: Site = { id: website_id, competitors: [], prompts: [], locations: [], attributes: [] };
  for (const c of spec.competitors ?? []) site.competitors.push((await post('/api/v1/competitors', { website_id, ...c })).competitor);
  for (const p of spec.prompts ?? [{ text: 'What is the best CRM for a small team?' }])
    site.prompts.push((await post('/api/v1/prompts', { website_id, ...p })).prompt);
  for (const l of spec.locations ?? []) site.locations.push(await post('/api/v1/locations', { website_id, ...l }));
  for (const a of spec.attributes ?? []) site.attributes.push((await post('/api/v1/attributes', { website_id, ...a })).attribute);
  return site;
}

/** How many CreditsUsed events a run appended: one per engine call that answered. */
export async function creditsOfRun(db: Knex, runId: string): Promise<number> {
  const [{ n }] = await db('aivis_events').where('type', 'CreditsUsed').whereRaw("data->>'run_id' = ?", [runId]).count<{ n: string }[]>('* as n');
  return Number(n);
}

/** Waits until a run has an outcome for every unit; returns the run as GET runs/:id shows it. */
export async function finishedRun(s: TestServer, key: string, websiteId: string, runId: string, timeoutMs = 30_000) {
  return until(
    `run ${runId} to finish`,
    async () => {
      const r = await call(s, 'GET', `/api/v1/response-streaming/runs/${runId}`, { key, query: { website_id: websiteId } });
      expect(r.status).toBe(200);
      return r.body.status !== 'running' && r.body;
    },
    timeoutMs,
  );
}

/** Imports answers to a website (a test's given): POST /api/v1/responses/import, expected 201; its body. */
export async function importAnswers(s: TestServer, key: string, websiteId: string, responses: readonly object[]) {
  const r = await call(s, 'POST', '/api/v1/responses/import', { key, body: { website_id: websiteId, responses } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** Every answer of a website as GET /api/v1/responses lists it (analyzed when read), page after page. */
export async function everyListedAnswer<T>(s: TestServer, key: string, websiteId: string): Promise<T[]> {
  const out: T[] = [];
  for (let page_num = 0; ; page_num++) {
    const r = await call(s, 'GET', '/api/v1/responses', { key, query: { website_id: websiteId, page_num, page_size: 100 } });
    expect(r.status).toBe(200);
    out.push(...(r.body.responses as T[]));
    if (!r.body.has_more) return out;
  }
}
