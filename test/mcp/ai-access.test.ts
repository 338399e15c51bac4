import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { ENGINE_IDS } from '../../src/analysis/ai-crawlers';
import { RateLimiter } from '../../src/limits/rate';
import { ORG_CHECKS_PER_MIN, orgLimitKey, PUBLIC_SCANS_PER_MIN } from '../../src/app/ai-access';
import { call, type TestServer } from '../support/server';
import { anonymousCaller, apiKey, awayFromMinuteEdge, callTool, connect, FIXTURE_DOMAIN, type FixtureSite, useFixtureServer } from './support';

let site: FixtureSite;
let s: TestServer;
let key: string;
let orgId: string;
let anon: Client;
// the anonymous client closes before the server and the fixture site
useFixtureServer('Checker', (x) => {
  ({ site, s, key, organizationId: orgId } = x);
  anon = anonymousCaller(s);
});
afterAll(async () => anon?.close());

const resetPublicBudget = () => s.rt.database.db('aivis_rate_limits').where('key', 'like', 'ai-access:public:%').delete();

describe('check_public_ai_access (no account)', () => {
  it('given a local fixture domain, then {result, diagnostics, log} as REST answers them', async () => {
    const r = await callTool(anon, 'check_public_ai_access', { domain: `https://${FIXTURE_DOMAIN}/` });
    expect(r.isError, r.text).toBe(false);
    expect(Object.keys(r.structured).sort()).toEqual(['diagnostics', 'log', 'result']);
    expect(r.structured.result).toMatchObject({ domain: FIXTURE_DOMAIN, status: 'accessible', hasSitemap: true });
    expect(Object.keys(r.structured.result.http).sort()).toEqual([...ENGINE_IDS].sort());
    expect(r.structured.diagnostics.robotsCheck).toMatchObject({ status: 200, error: null });
    expect(r.structured.log).toContain(FIXTURE_DOMAIN);
    expect(JSON.parse(r.text)).toEqual(r.structured);
    expect(site.requests).toContain(`${FIXTURE_DOMAIN}/robots.txt`);
  });

  it('given a domain that does not resolve, then blocked with every flag false, not an error', async () => {
    const r = await callTool(anon, 'check_public_ai_access', { domain: 'nowhere.example.com' });
    expect(r.isError, r.text).toBe(false);
    expect(r.structured.result.status).toBe('blocked');
    for (const id of ENGINE_IDS) expect(r.structured.result.http[id]).toEqual({ conversational: false, training: false });
  });

  it(`given ${PUBLIC_SCANS_PER_MIN} scans in a minute from one address, then the next is refused with 429 and retry_after; invalid domains spend nothing`, async () => {
    await awayFromMinuteEdge(5_000);
    await resetPublicBudget();
    for (const [domain, error] of [
      ['localhost', 'domain must be a public domain, not localhost'],
      ['10.0.0.1', 'domain must be a domain name, not an IP address'],
      ['ftp://open.example.com', 'domain must not include a scheme other than http or https (got ftp://)'],
    ]) {
      expect(await callTool(anon, 'check_public_ai_access', { domain })).toMatchObject({ isError: true, text: error, structured: { status: 400 } });
    }
    expect(await callTool(anon, 'check_public_ai_access', {})).toMatchObject({ isError: true, text: 'domain is required' });
    for (let i = 0; i < PUBLIC_SCANS_PER_MIN; i++) {
      const r = await callTool(anon, 'check_public_ai_access', { domain: FIXTURE_DOMAIN });
      expect(r.isError, `scan ${i + 1}: ${r.text}`).toBe(false);
    }
    const before = site.requests.length;
    const sixth = await callTool(anon, 'check_public_ai_access', { domain: FIXTURE_DOMAIN });
    expect(sixth).toMatchObject({ isError: true, text: 'Rate limit exceeded', structured: { error: 'Rate limit exceeded', status: 429 } });
    expect(sixth.structured.retry_after).toBeGreaterThanOrEqual(1);
    expect(sixth.structured.retry_after).toBeLessThanOrEqual(60);
    expect(site.requests.length).toBe(before);
    await resetPublicBudget();
  });
});

describe('check_ai_access (API key)', () => {
  it('given no key, then 401 Unauthorized (the client is asked to sign in)', async () => {
    await expect(callTool(anon, 'check_ai_access', { domain: FIXTURE_DOMAIN })).rejects.toThrow(/Unauthorized/);
  });

  it("given a key, then it checks the domain on the organization's budget shared with POST /api/v1/ai-access/check", async () => {
    await awayFromMinuteEdge(5_000);
    const client = await connect(s, apiKey(key));
    try {
      const first = await callTool(client, 'check_ai_access', { domain: FIXTURE_DOMAIN });
      expect(first.isError, first.text).toBe(false);
      expect(first.structured.result).toMatchObject({ domain: FIXTURE_DOMAIN, status: 'accessible' });
      expect(await callTool(client, 'check_ai_access', { domain: 'localhost' })).toMatchObject({
        isError: true,
        text: 'domain must be a public domain, not localhost',
      });

      // spend what is left of the minute's budget but one (1 went to the check above), elsewhere
      const limiter = new RateLimiter(s.rt.database.db);
      for (let i = 0; i < ORG_CHECKS_PER_MIN - 2; i++) await limiter.hit(orgLimitKey(orgId), ORG_CHECKS_PER_MIN, 60);
      const rest = await call(s, 'POST', '/api/v1/ai-access/check', { key, body: { domain: FIXTURE_DOMAIN } });
      expect(rest.status, JSON.stringify(rest.body)).toBe(200);
      const over = await callTool(client, 'check_ai_access', { domain: FIXTURE_DOMAIN });
      expect(over).toMatchObject({ isError: true, text: 'Rate limit exceeded', structured: { status: 429 } });
      const restOver = await call(s, 'POST', '/api/v1/ai-access/check', { key, body: { domain: FIXTURE_DOMAIN } });
      expect(restOver.status).toBe(429);
      expect(restOver.headers.get('retry-after')).toBeTruthy();
    } finally {
      await client.close();
    }
  });
});
