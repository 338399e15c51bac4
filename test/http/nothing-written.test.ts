import { describe, expect, it } from 'vitest';
import { requestValuation } from '../../commands/ai-value/request-valuation';
import { SYSTEM_ACTOR } from '../../src/domain/events';
import { newSite } from '../support/http';
import { sharedServer, type TestServer, useServer } from '../support/server';

let s: TestServer;
let org: { organization_id: string; key: string };
useServer(async (x) => {
  s = x;
  org = await s.org('Marked');
}, sharedServer);

// head() is the "nothing written" check of every refused request: it must see a request's write and only that
describe("the test server's mark of what requests wrote (head)", () => {
  it('given a mark, when a key creates a website, then the mark moves', async () => {
    const before = await s.head();
    await newSite(s, org.key);
    expect(await s.head()).not.toBe(before);
  });

  it("given a mark, when the system writes (a new organization, another organization's valuation), then it stays", async () => {
    const other = await s.org('Background');
    const site = await newSite(s, other.key);
    const before = await s.head();
    await s.org('Another');
    const ctx = { store: s.rt.store, organizationId: other.organization_id, actor: SYSTEM_ACTOR };
    expect((await requestValuation(ctx, { website_id: site, reason: 'manual', slot: `mark-${Date.now()}` })).requested).toBe(true);
    expect(await s.head()).toBe(before);
  });

  it('given a mark naming an organization, when the system writes for it, then that mark moves and one without it stays', async () => {
    const site = await newSite(s, org.key);
    const [named, plain] = [await s.head([org.organization_id]), await s.head()];
    const ctx = { store: s.rt.store, organizationId: org.organization_id, actor: SYSTEM_ACTOR };
    expect((await requestValuation(ctx, { website_id: site, reason: 'manual', slot: `mark-${Date.now()}` })).requested).toBe(true);
    expect(await s.head([org.organization_id])).not.toBe(named);
    expect(await s.head()).toBe(plain);
  });
});
