import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { AI_VALUE_NOT_ENABLED } from '../../src/app/ai-value';
import { MODEL_IDS } from '../../src/domain/models';
import { aiValuePass } from '../../src/workers/ai-value';
import { jobEnded } from '../support/jobs';
import { call, caughtUp, type TestServer } from '../support/server';
import type { World } from '../support/tenancy';
import { itRefusesOthersAndUnfeatured, toolOk, useMcpWorld } from './support';
import { postCreated } from '../support/http';

let s: TestServer;
let w: World;
let a: Client;
let b: Client;
let site: string;
let topic: string;

const DAY = 86_400_000;

useMcpWorld(async (ctx) => {
  ({
    s,
    w,
    clients: [a, b],
  } = ctx);
  const post = (path: string, body: unknown) => postCreated(s, w.a.key, path, body);
  site = (await post('/api/v1/websites', { name: 'Acme', url: 'https://acme-value.example.com' })).website.id;
  await post('/api/v1/competitors', { website_id: site, name: 'Bolt', url: 'https://bolt.example.com' });
  topic = (await post('/api/v1/topics', { website_id: site, name: 'CRM software' })).topic.id;
  const prompt = (await post('/api/v1/prompts', { website_id: site, topic_id: topic, text: 'Best CRM software?' })).prompt.id;
  const responses = Array.from({ length: 60 }, (_, i) => ({
    prompt_id: prompt,
    model: MODEL_IDS[i % 3],
    run_at: new Date(Date.now() - (1 + (i % 20)) * DAY).toISOString(),
    text: i % 2 ? 'Acme, then Bolt.' : 'Bolt is best.',
  }));
  await post('/api/v1/responses/import', { website_id: site, responses });
});

async function computeDue() {
  for (const j of await aiValuePass({ db: s.rt.database.db, store: s.rt.store })) expect(await jobEnded(s.rt, j)).toBe('succeeded');
  await caughtUp(s, ['ai-value']);
}

describe('MCP get_ai_search_value and set_topic_economics', () => {
  beforeAll(computeDue);

  it('given a computed website, then the tool answers exactly what REST answers', async () => {
    const rest = await call(s, 'GET', '/api/v1/ai-search-value', { key: w.a.key, query: { website_id: site } });
    expect(rest.status).toBe(200);
    const tool = await toolOk(a, 'get_ai_search_value', { website_id: site });
    expect(tool).toEqual(rest.body);
    expect(tool.has_computed_valuations).toBe(true);
    expect(tool.market.value_usd_mo).toBe(8000);
    expect(tool.topics[0]).toMatchObject({ topic_id: topic, share_basis: 'pw_sov', models_measured: 3, responses_28d: 60 });
  });

  it('given new economics through the tool, then the next computation prices the topic with them', async () => {
    const set = await toolOk(a, 'set_topic_economics', { website_id: site, topic_id: topic, economics: { monthly_searches: 500, cpc_usd: 2.5 } });
    expect(set).toEqual({ topic: { id: topic, name: 'CRM software', economics: { monthly_searches: 500, cpc_usd: 2.5 } } });
    await computeDue();
    const v = await toolOk(a, 'get_ai_search_value', { website_id: site });
    expect(v.market.value_usd_mo).toBe(1250);
    expect(v.topics[0].economics_source).toBe('topic');
  });

  itRefusesOthersAndUnfeatured(() => ({ s, other: b, site }), 'get_ai_search_value', {
    about: 'the feature',
    organization: 'No value',
    message: AI_VALUE_NOT_ENABLED,
  });
});
