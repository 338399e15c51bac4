import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { onRealPostgres } from '../support/db';
import { newSite } from '../support/http';
import { call, type TestServer, useServer } from '../support/server';
import { grepDatabase } from '../support/db-grep';

let s: TestServer;
useServer((x) => {
  s = x;
});

describe(`deleted facts are erased (${onRealPostgres ? 'real Postgres' : 'PGlite'})`, () => {
  it('given a fact whose text was changed once, when it is deleted and every projection rebuilt, then neither text nor its source URL is anywhere in the database', async () => {
    const { key } = await s.org('Erasure');
    const site = await newSite(s, key);
    const marker = {
      first: `kbmarkerfirst${randomUUID().slice(0, 8)}`,
      second: `kbmarkersecond${randomUUID().slice(0, 8)}`,
      url: `kbmarkerurl${randomUUID().slice(0, 8)}`,
    };
    const kept = `kbmarkerkept${randomUUID().slice(0, 8)}`;
    const f = (
      await call(s, 'POST', '/api/v1/knowledge-base/facts', {
        key,
        body: { website_id: site, text: `Our launch price is ${marker.first}`, source_url: `https://acme.example.com/${marker.url}` },
      })
    ).body.fact;
    await call(s, 'POST', '/api/v1/knowledge-base/facts', { key, body: { website_id: site, text: `We keep ${kept}` } });
    const changed = (await call(s, 'PATCH', `/api/v1/knowledge-base/facts/${f.id}`, { key, body: { text: `Our launch price is ${marker.second}` } }))
      .body.fact;
    expect(changed.id).not.toBe(f.id);
    // the read model holds the texts; the log holds them sealed only
    expect(await grepDatabase(s.rt.database.db, marker.first)).toContain('rm_kb_facts.text');
    expect(await grepDatabase(s.rt.database.db, marker.second)).toContain('rm_kb_facts.text');
    for (const m of Object.values(marker)) expect((await grepDatabase(s.rt.database.db, m)).filter((h) => h.startsWith('aivis_events'))).toEqual([]);

    // when: the fact (its current id) is deleted
    const r = await call(s, 'POST', '/api/v1/knowledge-base/facts/delete', { key, body: { website_id: site, fact_ids: [changed.id] } });
    expect(r.body).toEqual({ success: true, deleted_ids: [changed.id], not_found_ids: [] });
    for (const m of Object.values(marker)) expect(await grepDatabase(s.rt.database.db, m), m).toEqual([]);

    // and every projection is rebuilt from the log
    for (const runner of s.rt.runners.values()) await runner.rebuild();
    for (const m of Object.values(marker)) expect(await grepDatabase(s.rt.database.db, m), m).toEqual([]);
    expect(await grepDatabase(s.rt.database.db, kept)).toContain('rm_kb_facts.text');
    const listed = (await call(s, 'GET', '/api/v1/knowledge-base/facts', { key, query: { website_id: site } })).body.facts;
    expect(listed.map((x: { text: string }) => x.text)).toEqual([`We keep ${kept}`]);
    // the log still has the events, with the erased fields unreadable
    const recorded = (await s.rt.store.readStream(`knowledge-${site}`)).filter((e) => e.type === 'FactRecorded');
    expect(recorded.map((e) => (e.data as { text: string | null }).text)).toEqual([null, `We keep ${kept}`, null]);
    if (onRealPostgres) {
      const dump = execFileSync('pg_dump', ['--no-owner', '--data-only', s.databaseUrl!], { maxBuffer: 256 * 1024 * 1024 }).toString();
      expect(dump).toContain(kept);
      for (const m of Object.values(marker)) expect(dump).not.toContain(m);
    }
  }, 90_000);
});
