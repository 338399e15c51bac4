import { request } from 'undici';
import { ADMIN_PERMISSIONS, authorize, PERMISSION_CATEGORIES, type Permissions, userPrincipal, VIEWER_PERMISSIONS } from '../src/domain/principal';
import { type Bench, info, median, nowNs, quantile, report, sampleUs } from './lib';
import { withBenchServer } from './with-server';

/** A user in 20 groups of 50 websites each (1,000 websites), with 10 explicit memberships on top. */
function userIn20Groups() {
  const site = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const editor: Permissions = { ...VIEWER_PERMISSIONS, content: 'edit', prompts: 'edit' };
  return userPrincipal({
    organizationId: 'o',
    userId: 'u',
    email: 'u@example.com',
    plan: 'enterprise',
    features: [],
    orgRole: null,
    groups: Array.from({ length: 20 }, (_, g) => ({
      website_ids: Array.from({ length: 50 }, (_, i) => site(g * 50 + i)),
      permissions: g % 2 ? editor : VIEWER_PERMISSIONS,
    })),
    websites: Array.from({ length: 10 }, (_, i) => ({ website_id: site(i * 97), permissions: ADMIN_PERMISSIONS })),
  });
}

export const team: Bench = {
  name: 'team',
  about: 'organization administration: the access decision of a user in 20 groups, a direct bulk invite to 50 websites',
  async run({ quick }) {
    // the access decision: authorize() on a built principal, timed over batches (one call is below the timer's grain)
    const p = userIn20Groups();
    const sites = p.websiteIds!;
    const needs = PERMISSION_CATEGORIES.map((category) => ({ category, level: 'view' as const }));
    const BATCH = 1000;
    let sink = 0;
    const perCall = (
      await sampleUs(quick ? 200 : 1000, (k) => {
        for (let i = 0; i < BATCH; i++) {
          authorize(p, needs[(i + k) % needs.length], sites[(i * 7919 + k) % sites.length]);
          sink++;
        }
      })
    ).map((us) => us / BATCH);
    report('authorize_us', median(perCall), 'us', {
      goal: { op: '<=', value: 50 },
      note: `median per call over batches of ${BATCH}: a user in 20 groups over 1,000 websites plus 10 memberships (${sink} calls)`,
    });
    const build = await sampleUs(quick ? 200 : 1000, () => userIn20Groups());
    report('user_principal_build_us', median(build), 'us', { note: 'building that principal from its memberships (once per session)' });

    // a direct bulk invite to 50 websites over HTTP, a new person each time
    const n = quick ? 15 : 60;
    await withBenchServer(50, async (s) => {
      const websites = (await s.rt.database.db('rm_websites').where('organization_id', s.organizationId).select('id')).map(
        (r: { id: string }) => r.id,
      );
      const invite = async (i: number) => {
        const r = await request(`${s.url}/api/v1/invites/bulk`, {
          method: 'POST',
          headers: { 'x-api-key': s.key, 'content-type': 'application/json' },
          body: JSON.stringify({ invite_method: 'direct', email: `bench-${i}@example.com`, role: 'viewer', website_ids: websites }),
        });
        const body = (await r.body.json()) as { results: { success: boolean }[] };
        if (r.statusCode !== 200 || body.results.filter((x) => x.success).length !== 50)
          throw new Error(`bulk invite: ${r.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
      };
      for (let i = 0; i < 3; i++) await invite(-1 - i);
      const t0 = nowNs();
      const ms = (await sampleUs(n, invite)).map((us) => us / 1000).sort((a, b) => a - b);
      info(`${n} bulk invites in ${(Number(nowNs() - t0) / 1e9).toFixed(1)} s; the organization stream grows by 51 events each`);
      report('invites_bulk_50_ms', quantile(ms, 0.95), 'ms', {
        goal: { op: '<=', value: 150 },
        note: `p95 of ${n} direct bulk invites to 50 websites (new user each), answered after the team read model has them; median ${median(ms).toFixed(1)} ms`,
      });
    });
  },
};
