import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handle } from '../../commands/handle';
import { ContentItem } from '../../commands/content/item';
import { ContentUrls } from '../../commands/content/urls';
import { contentStream, contentUrlsStream } from '../../src/domain/content';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newSite } from '../support/http';
import { call, type TestServer, sharedServer } from '../support/server';
import { useWorld, type World } from '../support/tenancy';

let s: TestServer;
let w: World;
useWorld((ctx) => ({ s, w } = ctx), sharedServer);

const track = (site: string, url: string) => call(s, 'POST', '/api/v1/content/track', { key: w.a.key, body: { website_id: site, urls: [{ url }] } });

/**
 * A track call claims its URLs on the website's registry, then writes the items; a delete erases the item, then frees
 * its URL. A crash between the two steps leaves the registry ahead of the items: the next track call of the URL
 * repairs it, so a URL is never stuck on an item nobody can see.
 */
describe('content: crashes between the registry and the item streams', () => {
  it('given a URL claimed by an item that was never written, then tracking it adopts the claim and creates the item', async () => {
    const site = await newSite(s, w.a.key);
    const ctx = { store: s.rt.store, organizationId: w.a.organization_id, websiteId: site, actor: SYSTEM_ACTOR };
    const orphan = randomUUID();
    const claimed = await handle(ctx, contentUrlsStream(site), ContentUrls, () => ({
      events: [
        {
          type: 'ContentUrlsClaimed',
          data: { website_id: site, claims: [{ content_id: orphan, normalized_url: 'orphan.example.com/page', type: 'external', sheet_id: null }] },
        },
      ],
      result: null,
    }));
    expect('kind' in claimed).toBe(false);
    const r = await track(site, 'https://orphan.example.com/page');
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ created_count: 1, skipped_count: 0, created: [{ content_id: orphan }] });
    expect((await call(s, 'GET', `/api/v1/content/${orphan}`, { key: w.a.key })).body).toMatchObject({ normalized_url: 'orphan.example.com/page' });
    // and from then on it is an ordinary skip
    expect((await track(site, 'orphan.example.com/page')).body).toMatchObject({
      created_count: 0,
      skipped: [{ content_id: orphan, type: 'external' }],
    });
  });

  it('given an item deleted whose URL was never freed, then tracking the URL again makes a new item', async () => {
    const site = await newSite(s, w.a.key);
    const first = (await track(site, 'gone.example.com/page')).body.created[0].content_id as string;
    const ctx = { store: s.rt.store, organizationId: w.a.organization_id, websiteId: site, actor: SYSTEM_ACTOR };
    // the delete event alone (the release never ran)
    const deleted = await handle(ctx, contentStream(first), ContentItem, () => ({
      events: [{ type: 'ContentDeleted', data: { content_id: first, website_id: site } }],
      result: null,
    }));
    if ('kind' in deleted) throw new Error(deleted.message);
    await s.rt.waitForReadModels(deleted.position, ['content']);
    const again = await track(site, 'gone.example.com/page');
    expect(again.body).toMatchObject({ created_count: 1, skipped_count: 0 });
    expect(again.body.created[0].content_id).not.toBe(first);
  });
});
