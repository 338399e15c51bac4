import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { describe, expect, it } from 'vitest';
import { PipelineAnswers } from '../../queries/content/versions';
import { type TestServer, sharedServer } from '../support/server';
import type { World } from '../support/tenancy';
import { until } from '../support/until';
import { type AreaClients, toolOk, useAreaClients } from './support';

let s: TestServer, w: World, a: Client, scoped: Client, b: Client, refused: AreaClients['refused'];
useAreaClients((ctx) => ({ s, w, a, scoped, b, refused } = ctx), sharedServer);

describe('content pipeline tools', () => {
  it('given generate_content, then the same job as REST: status, publish refusal and success, edit, revise, versions, with REST messages', async () => {
    const started = PipelineAnswers.generated.parse(await toolOk(a, 'generate_content', { website_id: w.a.a1, title: 'MCP guide' }));
    expect(started).toMatchObject({ status: 'running', stage: 'pending_brief' });
    const id = started.content_id;
    await until('the brief', async () => (await toolOk(a, 'get_content_status', { content_id: id })).stage === 'generated_brief');
    await refused(a, 'publish_content', { content_id: id, url: 'acme.example.com/mcp' }, 409, 'Brief is not approved');
    await refused(a, 'edit_content', { content_id: id, edits: [{ find: 'a', replace: 'b' }] }, 409, 'Content is not finished');

    // the approval is REST's (an extension endpoint); the article follows
    const approve = await fetch(new URL(`/api/v1/content/${id}/brief/approve`, s.url), { method: 'POST', headers: { 'x-api-key': w.a.key } });
    expect(approve.status).toBe(200);
    await until('the article', async () => (await toolOk(a, 'get_content_status', { content_id: id })).status === 'succeeded');

    const latest = PipelineAnswers.version.parse(await toolOk(a, 'get_content_version', { content_id: id }));
    expect(latest).toMatchObject({ version_number: 2, change_type: 'generated' });
    const heading = latest.body!.split('\n')[0];
    await refused(
      a,
      'edit_content',
      { content_id: id, edits: [{ find: 'no such words', replace: 'x' }] },
      400,
      'edits[0].find does not match the current body',
    );
    await refused(a, 'edit_content', { content_id: id, edits: [{ find: heading, replace: '# X' }], expected_version_number: 1 }, 409, /stale/);
    const edited = PipelineAnswers.edited.parse(
      await toolOk(a, 'edit_content', { content_id: id, edits: [{ find: heading, replace: '# MCP guide, edited' }], expected_version_number: 2 }),
    );
    expect(edited).toMatchObject({ success: true, version_number: 3 });
    const revised = PipelineAnswers.revised.parse(await toolOk(a, 'revise_content', { content_id: id, instruction: 'Add a short FAQ.' }));
    expect(revised).toMatchObject({ version_number: 4 });
    expect(revised.previous_body_word_count).toBeGreaterThan(0);

    const published = PipelineAnswers.published.parse(
      await toolOk(a, 'publish_content', { content_id: id, url: 'https://acme.example.com/mcp-guide' }),
    );
    expect(published).toMatchObject({ stage: 'done', already_published: false, normalized_url: 'acme.example.com/mcp-guide' });
    const again = await toolOk(a, 'publish_content', { content_id: id, url: 'acme.example.com/mcp-guide-2' });
    expect(again).toMatchObject({ already_published: true, mark_as_done_time: published.mark_as_done_time });
    const v1 = await toolOk(a, 'get_content_version', { content_id: id, version_id: latest.version_id });
    expect(v1).toMatchObject({ version_number: 2, body: latest.body });
  });

  it("given another organization's or another website's content, then 404 and 403 as REST answers", async () => {
    const started = await toolOk(a, 'generate_content', { website_id: w.a.a1, title: 'Tenancy', auto_approve_brief: true });
    const id = started.content_id;
    // the job's own appends are over before the log's head is compared
    await until('the article', async () => (await toolOk(a, 'get_content_status', { content_id: id })).status === 'succeeded');
    await refused(b, 'get_content_status', { content_id: id }, 404, 'Content not found');
    await refused(b, 'publish_content', { content_id: id, url: 'x.example.com' }, 404, 'Content not found');
    await refused(scoped, 'get_content_version', { content_id: id }, 403, 'Unauthorized access to this website');
    await refused(scoped, 'revise_content', { content_id: id, instruction: 'x' }, 403, 'Unauthorized access to this website');
    await refused(a, 'get_content_status', { content_id: id, website_id: w.a.a2 }, 404, 'Content not found');
    await refused(b, 'generate_content', { website_id: w.a.a1 }, 403, 'Unauthorized access to this website');
    await refused(a, 'generate_content', { website_id: w.a.a1, type: 'optimize' }, 400, /^url/);
  });
});
