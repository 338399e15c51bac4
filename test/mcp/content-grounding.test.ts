import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PipelineAnswers } from '../../queries/content/versions';
import { createSafeFetcher } from '../../src/net/safe-fetch';
import { simulatedEnginesWith } from '../support/engines';
import { fakeResolver } from '../support/net';
import { call, startServer, type TestServer } from '../support/server';
import { buildWorld, type World } from '../support/tenancy';
import { until } from '../support/until';
import { apiKey, callTool, connect, toolOk } from './support';

/** The writer's prompts, every one. */
const asked: string[] = [];
const engines = simulatedEnginesWith(async (_model, req, simulated) => {
  if (req.prompt.startsWith('aivis writer:')) asked.push(req.prompt);
  return simulated();
});

let s: TestServer;
let w: World;
let a: Client;
let off: Client;
let offSite: string;
beforeAll(async () => {
  s = await startServer({}, {}, undefined, { engines, fetch: createSafeFetcher({ resolver: fakeResolver({}) }) });
  w = await buildWorld(s);
  const noKb = await s.org('No KB', { features: ['pitch'] });
  offSite = (await call(s, 'POST', '/api/v1/websites', { key: noKb.key, body: { name: 'Off', url: 'https://off.example.com' } })).body.website.id;
  [a, off] = await Promise.all([connect(s, apiKey(w.a.key)), connect(s, apiKey(noKb.key))]);
});
afterAll(async () => {
  await Promise.all([a, off].map((c) => c?.close()));
  await s?.close();
});

const fact = async (text: string) =>
  (await call(s, 'POST', '/api/v1/knowledge-base/facts', { key: w.a.key, body: { website_id: w.a.a1, text } })).body.fact.id as string;

describe('generate_content with fact_review', () => {
  it('given kept and excluded facts, then the writer gets the kept one only and get_content_version records it; REST refusals apply', async () => {
    const kept = await fact('Acme ships every order within 24 hours.');
    const excluded = await fact('Acme charges a restocking fee.');
    const started = PipelineAnswers.generated.parse(
      await toolOk(a, 'generate_content', {
        website_id: w.a.a1,
        title: 'MCP grounded',
        auto_approve_brief: true,
        fact_review: { kept_claim_ids: [kept], excluded_claim_ids: [excluded] },
      }),
    );
    await until('generated', async () => {
      const st = await toolOk(a, 'get_content_status', { content_id: started.content_id });
      return (st as { stage: string }).stage === 'generated' ? st : undefined;
    });
    const v = PipelineAnswers.version.parse(await toolOk(a, 'get_content_version', { content_id: started.content_id }));
    expect(v.fact_ids).toEqual([kept]);
    const mine = asked.filter((p) => p.includes('Title: MCP grounded'));
    expect(mine).toHaveLength(2);
    for (const p of mine) {
      expect(p).toContain('within 24 hours');
      expect(p).not.toContain('restocking');
    }

    const before = await s.head();
    const unknown = '00000000-0000-4000-8000-00000000abcd';
    const bad = await callTool(a, 'generate_content', { website_id: w.a.a1, title: 'MCP refused', fact_review: { kept_claim_ids: [unknown] } });
    expect(bad.isError).toBe(true);
    expect(bad.structured.status).toBe(400);
    expect(bad.text).toContain(`fact_review.kept_claim_ids`);
    expect(bad.text).toContain(unknown);
    const gated = await callTool(off, 'generate_content', { website_id: offSite, title: 'MCP refused', fact_review: { kept_claim_ids: [kept] } });
    expect(gated.isError).toBe(true);
    expect(gated.structured.status).toBe(403);
    expect(gated.text).toBe('Knowledge base is not enabled for this organization');
    expect(await s.head()).toBe(before);
  });
});
