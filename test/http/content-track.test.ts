import { describe, expect, it } from 'vitest';
import { newSite, refusedWithoutWrite } from '../support/http';
import { call, caughtUp, type TestServer, sharedServer } from '../support/server';
import { tenancyChecks, UNKNOWN_ID, useWorld, websiteTenancyChecks, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const track = (body: unknown, key = w.a.key) => call(s, 'POST', '/api/v1/content/track', { key, body });
const item = (id: string, key = w.a.key, query?: Record<string, string>) => call(s, 'GET', `/api/v1/content/${id}`, { key, query });

async function sheet(site: string, name: string, type: 'sheet' | 'view' = 'sheet') {
  const r = await call(s, 'POST', '/api/v1/content/sheets', { key: w.a.key, body: { website_id: site, name, type } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.sheet.sheet_id as string;
}
async function column(sheetId: string, name: string, type: string, options?: string[]) {
  const r = await call(s, 'POST', `/api/v1/content/sheets/${sheetId}/columns`, { key: w.a.key, body: { name, type, options } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.column.column_id as string;
}

describe('POST /api/v1/content/track', () => {
  it('given new URLs, then each is tracked once with the protocol stripped, its type by domain, a slug title, and readable', async () => {
    const site = await newSite(s, w.a.key, 'Acme', 'https://www.acme-track.example.com');
    const r = await track({
      website_id: site,
      urls: [
        { url: 'https://www.acme-track.example.com/blog/how-to-track-pages?utm_source=x' },
        { url: 'blog.acme-track.example.com/news/launch_day.html', title: 'Launch!' },
        { url: 'https://thirdparty.example.org/review/acme' },
        // the first row again, through a tracking-parameter variant: collapses, first wins
        { url: 'http://acme-track.example.com/blog/how-to-track-pages/?gclid=abc', title: 'Not me' },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ success: true, created_count: 3, skipped_count: 0, skipped: [] });
    const [a, b, c] = r.body.created;
    expect(a).toEqual({
      content_id: expect.any(String),
      url: 'www.acme-track.example.com/blog/how-to-track-pages?utm_source=x',
      sheet_id: null,
      destination_name: 'All content',
      content_hub_url: expect.stringMatching(new RegExp(`/api/v1/content/${a.content_id}$`)),
    });
    const one = await item(a.content_id);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      content_id: a.content_id,
      website_id: site,
      title: 'How to track pages',
      url: 'www.acme-track.example.com/blog/how-to-track-pages?utm_source=x',
      normalized_url: 'acme-track.example.com/blog/how-to-track-pages',
      type: 'imported',
      stage: null,
      status: null,
      pipeline_status: null,
      body: null,
      brief: null,
      fields: [],
      version_number: 0,
      mark_as_done_time: null,
    });
    expect((await item(b.content_id)).body).toMatchObject({
      title: 'Launch!',
      type: 'imported',
      url: 'blog.acme-track.example.com/news/launch_day.html',
    });
    expect((await item(c.content_id)).body).toMatchObject({ title: 'Acme', type: 'external', normalized_url: 'thirdparty.example.org/review/acme' });

    // tracked again (another variant, another tab): skipped with its id and type, not moved, values kept
    const tab = await sheet(site, 'Blog');
    const again = await track({
      website_id: site,
      sheet_id: tab,
      urls: [{ url: 'acme-track.example.com/blog/how-to-track-pages#top', title: 'Other' }, { url: 'https://new.example.net/x' }],
    });
    expect(again.status).toBe(200);
    expect(again.body.created_count).toBe(1);
    expect(again.body.created[0]).toMatchObject({ sheet_id: tab, destination_name: 'Blog' });
    expect(again.body.skipped).toEqual([
      {
        content_id: a.content_id,
        url: 'acme-track.example.com/blog/how-to-track-pages#top',
        type: 'imported',
        sheet_id: null,
        destination_name: 'All content',
        content_hub_url: a.content_hub_url,
      },
    ]);
    expect((await item(a.content_id)).body).toMatchObject({ title: 'How to track pages', sheet_id: null });
  });

  it('given a view-type tab, then the rows go to the shared pool, echoed per row', async () => {
    const site = await newSite(s, w.a.key);
    const view = await sheet(site, 'My view', 'view');
    const r = await track({ website_id: site, sheet_id: view, urls: [{ url: 'a.example.com/1' }] });
    expect(r.status).toBe(200);
    expect(r.body.created[0]).toMatchObject({ sheet_id: null, destination_name: 'All content' });
  });

  it('given fields of the six types, then they are stored; multi-select options are created case-insensitively', async () => {
    const site = await newSite(s, w.a.key);
    const tab = await sheet(site, 'Pages');
    const cols = {
      text: await column(tab, 'Notes', 'text'),
      link: await column(tab, 'Source', 'link'),
      number: await column(tab, 'Score', 'number'),
      date: await column(tab, 'Published', 'date'),
      checkbox: await column(tab, 'Reviewed', 'checkbox'),
      tags: await column(tab, 'Tags', 'multi_select', ['Blue']),
    };
    const r = await track({
      website_id: site,
      sheet_id: tab,
      urls: [
        {
          url: 'p.example.com/one',
          fields: [
            { column: 'notes', value: 'hello' },
            { column: 'SOURCE', value: 'https://src.example.com/a' },
            { column: 'Score', value: 4.5 },
            { column: 'Published', value: '2026-03-05' },
            { column: 'Reviewed', value: true },
            { column: 'Tags', value: ['blue', 'Green', 'GREEN'] },
          ],
        },
        { url: 'p.example.com/two', fields: [{ column: 'Tags', value: ['green', 'red'] }] },
      ],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const one = (await item(r.body.created[0].content_id)).body;
    const byName = Object.fromEntries(one.fields.map((f: { column: string; value: unknown }) => [f.column, f.value]));
    expect(byName).toEqual({
      Notes: 'hello',
      Source: 'https://src.example.com/a',
      Score: 4.5,
      Published: '2026-03-05T00:00:00.000Z',
      Reviewed: true,
      Tags: ['Blue', 'Green'],
    });
    const two = (await item(r.body.created[1].content_id)).body;
    expect(two.fields).toEqual([{ column_id: cols.tags, column: 'Tags', type: 'multi_select', value: ['Green', 'red'] }]);
    const sheets = await call(s, 'GET', '/api/v1/content/sheets', { key: w.a.key, query: { website_id: site } });
    expect(sheets.body.sheets[0].columns.find((c: { name: string }) => c.name === 'Tags').options).toEqual(['Blue', 'Green', 'red']);
  });

  it('given a bad row anywhere, then 400 naming the field and nothing tracked', async () => {
    const site = await newSite(s, w.a.key);
    const tab = await sheet(site, 'Checked');
    await column(tab, 'Score', 'number');
    await column(tab, 'Summary', 'generated');
    await column(tab, 'Tags', 'multi_select');
    await column(tab, 'When', 'date');
    await column(tab, 'Link', 'link');
    await column(tab, 'Done', 'checkbox');
    const ok = { url: 'ok.example.com/fine' };
    const rows = (bad: unknown) => ({ website_id: site, sheet_id: tab, urls: [ok, bad] });
    const tooMany = Array.from({ length: 501 }, (_, i) => ({ url: `m.example.com/${i}` }));
    /** a track call refused with 400 and the error given */
    const refused = (body: unknown, error: RegExp) => ({ method: 'POST', path: '/api/v1/content/track', body, status: 400, error });
    /** the second row with one field of `column` set to `value` */
    const badField = (column: string, value: unknown, error: RegExp) => refused(rows({ url: 'a.example.com/b', fields: [{ column, value }] }), error);
    await refusedWithoutWrite(s, w.a.key, [
      refused({ website_id: site, urls: [] }, /urls/),
      refused({ website_id: site, urls: tooMany }, /urls/),
      refused(rows({ url: 'ftp://x.example.com/a' }), /^urls\[1\]\.url/),
      refused(rows({ url: 'not a url' }), /^urls\[1\]\.url/),
      badField('Nope', 1, /^urls\[1\]\.fields\[0\]\.column/),
      badField('Summary', 'x', /^urls\[1\]\.fields\[0\]\.column: .*generated/),
      badField('Score', '3', /^urls\[1\]\.fields\[0\]\.value/),
      badField('When', 'yesterday', /^urls\[1\]\.fields\[0\]\.value/),
      badField('Link', 'javascript:alert(1)', /^urls\[1\]\.fields\[0\]\.value/),
      badField('Done', 'yes', /^urls\[1\]\.fields\[0\]\.value/),
      badField(
        'Tags',
        Array.from({ length: 51 }, (_, i) => `t${i}`),
        /^urls\[1\]\.fields\[0\]\.value: must have at most 50 labels/,
      ),
      // no tab: the shared pool has no customer columns
      refused({ website_id: site, urls: [{ url: 'a.example.com/c', fields: [{ column: 'Score', value: 1 }] }] }, /^urls\[0\]\.fields\[0\]\.column/),
      refused({ website_id: site, sheet_id: UNKNOWN_ID, urls: [ok] }, /^sheet_id/),
    ]);
    // 50 labels are fine
    const fifty = await track(
      rows({ url: 'a.example.com/fifty', fields: [{ column: 'Tags', value: Array.from({ length: 50 }, (_, i) => `t${i}`) }] }),
    );
    expect(fifty.status, JSON.stringify(fifty.body)).toBe(200);
    expect(fifty.body.created_count).toBe(2);
  });

  it('given the same URL tracked by concurrent calls, then exactly one item is created and every call names it', async () => {
    const site = await newSite(s, w.a.key);
    const calls = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        track({ website_id: site, urls: [{ url: `https://race.example.com/page?utm_medium=${i}` }, { url: `race.example.com/own-${i}` }] }),
      ),
    );
    for (const r of calls) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const created = calls.flatMap((r) => r.body.created).filter((x: { url: string }) => x.url.includes('/page'));
    const skipped = calls.flatMap((r) => r.body.skipped);
    expect(created).toHaveLength(1);
    expect(skipped).toHaveLength(7);
    expect(new Set(skipped.map((x: { content_id: string }) => x.content_id))).toEqual(new Set([created[0].content_id]));
  });

  it('given tracking, then the activity feed lists each item as content created', async () => {
    const site = await newSite(s, w.a.key);
    const r = await track({ website_id: site, urls: [{ url: 'feed.example.com/a' }, { url: 'feed.example.com/b' }] });
    await caughtUp(s, ['activity']);
    const feed = await call(s, 'GET', '/api/v1/activity', { key: w.a.key, query: { website_id: site, entity_type: 'content', page_size: 100 } });
    expect(feed.status).toBe(200);
    const ids = feed.body.data.flatMap((e: { entity_ids: string[]; change_type: string }) => (e.change_type === 'created' ? e.entity_ids : []));
    expect(new Set(ids)).toEqual(new Set(r.body.created.map((x: { content_id: string }) => x.content_id)));
  });

  it("given another organization's tab, a differing website_id or a scoped key outside it, then adding a column is refused and nothing written", async () => {
    const name = `Tab ${Date.now()}`;
    const tab = await sheet(w.a.a1, name);
    await refusedWithoutWrite(s, w.b.key, [
      { method: 'POST', path: `/api/v1/content/sheets/${tab}/columns`, body: { name: 'X', type: 'text' }, status: 404, error: 'Sheet not found' },
    ]);
    await refusedWithoutWrite(s, w.a.scoped, [
      {
        method: 'POST',
        path: `/api/v1/content/sheets/${tab}/columns`,
        body: { name: 'X', type: 'text' },
        status: 403,
        error: 'Unauthorized access to this website',
      },
    ]);
    await refusedWithoutWrite(s, w.a.key, [
      {
        method: 'POST',
        path: `/api/v1/content/sheets/${tab}/columns`,
        body: { website_id: w.a.a2, name: 'X', type: 'text' },
        status: 404,
        error: 'Sheet not found',
      },
      {
        method: 'POST',
        path: `/api/v1/content/sheets/${UNKNOWN_ID}/columns`,
        body: { name: 'X', type: 'text' },
        status: 404,
        error: 'Sheet not found',
      },
      { method: 'POST', path: `/api/v1/content/sheets/${tab}/columns`, body: { name: 'X', type: 'color' }, status: 400, error: /^type/ },
      {
        method: 'POST',
        path: `/api/v1/content/sheets/${tab}/columns`,
        body: { name: 'X', type: 'text', options: ['a'] },
        status: 400,
        error: /^options/,
      },
    ]);
    await column(tab, 'Owner', 'text');
    await refusedWithoutWrite(s, w.a.key, [
      { method: 'POST', path: `/api/v1/content/sheets/${tab}/columns`, body: { name: 'owner', type: 'number' }, status: 409 },
      // tab names are unique per website, case-insensitively
      { method: 'POST', path: '/api/v1/content/sheets', body: { website_id: w.a.a1, name: name.toUpperCase() }, status: 409 },
    ]);
  });

  tenancyChecks('POST /api/v1/content/track', () => w, {
    method: 'POST',
    websiteScoped: true,
    request: (id) => ({ path: '/api/v1/content/track', body: { website_id: id, urls: [{ url: 'tenancy.example.com/x' }] } }),
  });
  websiteTenancyChecks(() => w, 'GET', '/api/v1/content/sheets');
  websiteTenancyChecks(() => w, 'POST', '/api/v1/content/sheets', { name: 'T' });
});
