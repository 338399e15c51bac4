import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLAUDEBOT_UA, uploadCrawlerLog } from '../support/crawlers';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { type AreaClients, toolOk, useAreaClients } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client, refused: AreaClients['refused'];
useAreaClients((ctx) => ({ s, w, a, scoped, b, refused } = ctx), sharedServer);

const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const line = (ip: string, ua: string, path: string) =>
  JSON.stringify({
    ClientIP: ip,
    ClientRequestUserAgent: ua,
    ClientRequestMethod: 'GET',
    ClientRequestPath: path,
    EdgeResponseStatus: 200,
    EdgeStartTimestamp: `${DAY}T08:00:00Z`,
  });

describe('MCP get_crawler_activity and get_crawled_pages', () => {
  beforeAll(async () => {
    const body = [line('198.51.100.1', CLAUDEBOT_UA, '/docs'), line('198.51.100.2', CLAUDEBOT_UA, '/docs/')].join('\n');
    const r = await uploadCrawlerLog(s, w.a.key, w.a.a1, body, { format: 'json' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });

  it('answers what REST answers', async () => {
    const args = { website_id: w.a.a1, start_date: DAY, end_date: DAY, verification: 'all' };
    const rest = await call(s, 'GET', '/api/v1/crawlers/activity', { key: w.a.key, query: args });
    const tool = await toolOk(a, 'get_crawler_activity', args);
    expect(tool).toEqual(rest.body);
    expect(tool.data).toEqual([
      { bot: 'ClaudeBot', operator: 'Anthropic', purpose: 'training', hits: 2, pages: 1, last_seen: `${DAY}T08:00:00.000Z` },
    ]);
  });

  it('get_crawled_pages lists verified crawls only: an unverifiable bot is not among them', async () => {
    const pages = await toolOk(a, 'get_crawled_pages', { website_id: w.a.a1, start_date: DAY, end_date: DAY });
    expect(pages).toMatchObject({ data: [], page_num: 0, has_more: false });
  });

  it('refuses the other organization, a scoped key outside its website and bad input with REST’s status and message', async () => {
    await refused(b, 'get_crawler_activity', { website_id: w.a.a1 }, 403, /./);
    await refused(scoped, 'get_crawled_pages', { website_id: w.a.a1 }, 403, /./);
    await refused(a, 'get_crawler_activity', { website_id: w.a.a1, group_by: 'week' }, 400, /^group_by: /);
  });
});
