import { describe, expect, it } from 'vitest';
import { ContentItem } from '../../commands/content/item';
import { decideDelete, decideRelease, decideTitle } from '../../commands/content/item-commands';
import { ContentSheets } from '../../commands/content/sheets';
import { decideClaims, decideOptions, prepareRows, stripProtocol, titleFromUrl } from '../../commands/content/track';
import { ContentUrls } from '../../commands/content/urls';
import { invalid, notFound } from '../../src/domain/errors';
import { given } from '../support/given';

const W = '11111111-1111-4111-8111-111111111111';
const A = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const B = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';
const S = 'cccccccc-cccc-4ccc-8ccc-cccccccccccc';
const C = 'dddddddd-dddd-4ddd-8ddd-dddddddddddd';

const claimed = (content_id: string, normalized_url: string) => ({
  type: 'ContentUrlsClaimed' as const,
  data: { website_id: W, claims: [{ content_id, normalized_url, type: 'imported' as const, sheet_id: null }] },
});

describe('tracking, decided', () => {
  it('strips the protocol and derives a title from the slug (the host for a root URL)', () => {
    expect(stripProtocol(' HTTPS://www.a.com/x?y=1 ')).toBe('www.a.com/x?y=1');
    expect(stripProtocol('//a.com/x')).toBe('a.com/x');
    expect(titleFromUrl('a.com/blog/how-to-track_pages.html')).toBe('How to track pages');
    expect(titleFromUrl('a.com/caf%C3%A9-guide')).toBe('Café guide');
    expect(titleFromUrl('a.com/')).toBe('a.com');
  });

  it('given rows, then duplicates collapse to the first (tracking-parameter variants included) and the type follows the domain', () => {
    const rows = prepareRows(
      {
        website_id: W,
        urls: [
          { url: 'https://www.acme.com/a?utm_source=x', title: 'First' },
          { url: 'acme.com/a/', title: 'Second' },
          { url: 'blog.acme.com/b' },
          { url: 'other.org/c' },
        ],
      },
      'https://acme.com',
      null,
    );
    if ('kind' in rows) throw new Error(rows.message);
    expect(rows.map((r) => [r.normalized_url, r.title, r.type])).toEqual([
      ['acme.com/a', 'First', 'imported'],
      ['blog.acme.com/b', 'B', 'imported'],
      ['other.org/c', 'C', 'external'],
    ]);
    expect(prepareRows({ website_id: W, urls: [{ url: 'ok.com/a' }, { url: 'mailto:x@y.z' }] }, 'https://acme.com', null)).toEqual(
      invalid('urls[1].url: invalid URL "mailto:x@y.z": only http and https are supported'),
    );
  });

  it('given a URL held by a live item, then a skip naming it; a free URL, a claim; a deleted holder, a release and a new claim; an orphan, adopted', () => {
    const rows = (urls: string[]) => urls.map((normalized_url, i) => ({ normalized_url, type: 'external' as const, content_id: `new-${i}` }));
    const g = given(ContentUrls, claimed(A, 'a.com/x'), claimed(B, 'b.com/y'));
    g.when((s) => decideClaims(s, { website_id: W, sheet_id: null, rows: rows(['a.com/x', 'c.com/z']), dead: new Set(), orphans: new Set() })).then(
      (events) => {
        expect(events).toEqual([
          {
            type: 'ContentUrlsClaimed',
            data: { website_id: W, claims: [{ content_id: 'new-1', normalized_url: 'c.com/z', type: 'external', sheet_id: null }] },
          },
        ]);
      },
    );
    const dead = g
      .when((s) => decideClaims(s, { website_id: W, sheet_id: S, rows: rows(['a.com/x', 'b.com/y']), dead: new Set([A]), orphans: new Set([B]) }))
      .then([
        { type: 'ContentUrlReleased', data: { website_id: W, content_id: A } },
        {
          type: 'ContentUrlsClaimed',
          data: { website_id: W, claims: [{ content_id: 'new-0', normalized_url: 'a.com/x', type: 'external', sheet_id: S }] },
        },
      ]);
    expect(dead.result?.map((o) => o.kind)).toEqual(['created', 'adopt']);
  });

  it('given a claim by an item that holds another URL, then the old URL is free', () => {
    const { state } = given(ContentUrls, claimed(A, 'a.com/old'), claimed(A, 'a.com/new'))
      .when(() => ({ events: [], result: null }))
      .then([]);
    expect([...state.byUrl.keys()]).toEqual(['a.com/new']);
    expect(state.byContent.get(A)).toBe('a.com/new');
  });

  it('given a release that does not name the URL (it is sealed with the erased item), then the URL the item held is free and claimed anew', () => {
    given(ContentUrls, claimed(A, 'a.com/x'), { type: 'ContentUrlReleased', data: { website_id: W, content_id: A } })
      .when((s) =>
        decideClaims(s, {
          website_id: W,
          sheet_id: null,
          rows: [{ normalized_url: 'a.com/x', type: 'external', content_id: B }],
          dead: new Set(),
          orphans: new Set(),
        }),
      )
      .then([
        {
          type: 'ContentUrlsClaimed',
          data: { website_id: W, claims: [{ content_id: B, normalized_url: 'a.com/x', type: 'external', sheet_id: null }] },
        },
      ]);
  });

  it('given claims whose URL reads null (their item erased), then the item holds no URL, and the URL it held before is free', () => {
    const erased = {
      type: 'ContentUrlsClaimed' as const,
      data: { website_id: W, claims: [{ content_id: A, normalized_url: null, type: 'imported' as const, sheet_id: null }] },
    };
    const { state } = given(ContentUrls, claimed(A, 'a.com/old'), erased, claimed(B, 'b.com/y'))
      .when(() => ({ events: [], result: null }))
      .then([]);
    expect([...state.byUrl.keys()]).toEqual(['b.com/y']);
    expect(state.byContent.has(A)).toBe(false);
  });

  it('given new multi-select labels, then only those the column lacks are added, case-insensitively, first spelling kept', () => {
    given(
      ContentSheets,
      { type: 'ContentSheetCreated', data: { website_id: W, sheet_id: S, name: 'Tab', type: 'sheet' } },
      { type: 'ContentColumnCreated', data: { website_id: W, sheet_id: S, column_id: C, name: 'Tags', type: 'multi_select', options: ['Blue'] } },
    )
      .when((s) => decideOptions(s, { website_id: W, sheet_id: S, wanted: new Map([[C, ['blue', 'Green', 'GREEN']]]) }))
      .then([{ type: 'ContentColumnOptionsAdded', data: { website_id: W, sheet_id: S, column_id: C, options: ['Green'] } }]);
  });

  it('given a deleted item, then title and delete answer not found; a delete frees only the URL the item holds', () => {
    const tracked = {
      type: 'ContentTracked' as const,
      data: { content_id: A, website_id: W, url: 'a.com/x', normalized_url: 'a.com/x', type: 'imported' as const, title: 'X', sheet_id: null },
    };
    given(ContentItem, tracked)
      .when((s) => decideDelete(s, { content_id: A }))
      .then([{ type: 'ContentDeleted', data: { content_id: A, website_id: W } }]);
    const gone = given(ContentItem, tracked, { type: 'ContentDeleted', data: { content_id: A, website_id: W } });
    gone.when((s) => decideTitle(s, { content_id: A, title: 'Y' })).then(notFound('Content not found'));
    gone.when((s) => decideDelete(s, { content_id: A })).then(notFound('Content not found'));
    given(ContentUrls, claimed(B, 'a.com/x'))
      .when((s) => decideRelease(s, { website_id: W, content_id: A }))
      .then([]);
  });
});
