import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { Answers } from '../../queries/content/views';
import { importAnswers } from '../support/answers';
import { call, type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { type AreaClients, toolOk, useAreaClients } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client, refused: AreaClients['refused'];
useAreaClients((ctx) => ({ s, w, a, scoped, b, refused } = ctx), sharedServer);

describe('content hub tools', () => {
  it('given pages tracked with track_content_urls, then the listing, detail, tabs, per-prompt figures and delete follow REST', async () => {
    const site = (await call(s, 'POST', '/api/v1/websites', { key: w.a.key, body: { name: 'Mcp Co', url: 'https://mcp-content.example.com' } })).body
      .website.id;
    const prompt = (await call(s, 'POST', '/api/v1/prompts', { key: w.a.key, body: { website_id: site, text: 'where to read?' } })).body.prompt.id;
    await importAnswers(s, w.a.key, site, [
      {
        prompt_id: prompt,
        model: 'chatgpt',
        run_at: '2026-03-01T00:00:00Z',
        text: 'Read https://mcp-content.example.com/blog/post',
        citations: [],
      },
      { prompt_id: prompt, model: 'chatgpt', run_at: '2026-03-02T00:00:00Z', text: 'Nothing', citations: ['https://elsewhere.example.org/'] },
    ]);
    const sheet = Answers.sheet.parse(await toolOk(a, 'create_content_hub_sheet', { website_id: site, name: 'Posts' })).sheet;
    await toolOk(a, 'create_content_hub_column', { sheet_id: sheet.sheet_id, name: 'Owner', type: 'text' });
    const tracked = Answers.track.parse(
      await toolOk(a, 'track_content_urls', {
        website_id: site,
        sheet_id: sheet.sheet_id,
        urls: [
          { url: 'mcp-content.example.com/blog/post?utm_source=x', fields: [{ column: 'owner', value: 'Ann' }] },
          { url: 'https://mcp-content.example.com/blog/post' },
        ],
      }),
    );
    expect(tracked).toMatchObject({ success: true, created_count: 1, skipped_count: 0 });
    const id = tracked.created[0].content_id;

    const listed = Answers.list.parse(
      await toolOk(a, 'list_content', { website_id: site, filters: { start_date: 'March 1, 2026', end_date: '2026-03-02' } }),
    );
    expect(listed.content).toEqual([
      expect.objectContaining({ content_id: id, citations: 1, total_responses: 2, citation_percent: 50, sheet_name: 'Posts' }),
    ]);
    const finished = Answers.list.parse(await toolOk(a, 'get_tracked_content', { website_id: site }));
    expect(finished.content.map((x) => x.content_id)).toEqual([id]);
    const detail = Answers.item.parse(await toolOk(a, 'get_content_detail', { content_id: id }));
    expect(detail).toMatchObject({
      content_id: id,
      type: 'imported',
      url: 'mcp-content.example.com/blog/post?utm_source=x',
      fields: [{ column: 'Owner', value: 'Ann' }],
    });
    const tabs = Answers.sheets.parse(await toolOk(a, 'get_content_hub_sheets', { website_id: site }));
    expect(tabs.sheets).toEqual([
      { sheet_id: sheet.sheet_id, name: 'Posts', type: 'sheet', columns: [expect.objectContaining({ name: 'Owner', type: 'text' })] },
    ]);
    const prompts = Answers.prompts.parse(await toolOk(a, 'get_content_citation_prompts', { website_id: site, content_id: id }));
    expect(prompts.prompts).toEqual([{ prompt_id: prompt, prompt: 'where to read?', citations: 1, citation_percent: 50 }]);

    // as REST refuses: another organization's content id 404, a website outside a scoped key 403, bad input 400
    await refused(b, 'get_content_detail', { content_id: id }, 404, 'Content not found');
    await refused(b, 'delete_content', { content_id: id }, 404, 'Content not found');
    await refused(scoped, 'get_content_detail', { content_id: id }, 403, 'Unauthorized access to this website');
    await refused(scoped, 'track_content_urls', { website_id: site, urls: [{ url: 'x.example.com/a' }] }, 403, 'Unauthorized access to this website');
    await refused(b, 'list_content', { website_id: site }, 403, 'Unauthorized access to this website');
    await refused(a, 'get_content_detail', { content_id: id, website_id: w.a.a1 }, 404, 'Content not found');
    await refused(a, 'track_content_urls', { website_id: site, urls: [] }, 400, /urls/);

    expect(await toolOk(a, 'delete_content', { content_id: id, website_id: site })).toEqual({ success: true });
    await refused(a, 'get_content_detail', { content_id: id }, 404, 'Content not found');
  });
});
