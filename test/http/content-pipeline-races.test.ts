import { expect, it } from 'vitest';
import { useTwoInstancesOverNats } from '../support/nats-instances';
import { call, type TestServer } from '../support/server';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';

// The pipeline's rules raced over two instances on one database and one NATS JetStream: each instance serialises its
// own writes to a stream, so only the streams' expected revisions can settle these races.
const suite = onPostgresServer('content pipeline races', 'two instances need a shared Postgres server');

const N = 6;

suite('content pipeline under concurrent calls on two instances', () => {
  let a: TestServer;
  let b: TestServer;
  let key: string;
  let site: string;
  useTwoInstancesOverNats(
    () => ({}),
    async (ctx) => {
      ({ a, b } = ctx);
      key = (await a.org('PipelineRaces')).key;
      site = (await call(a, 'POST', '/api/v1/websites', { key, body: { name: 'Racer', url: 'https://pipeline-racer.example.com' } })).body.website.id;
    },
  );

  async function article(title: string): Promise<string> {
    const r = await call(a, 'POST', '/api/v1/content/generate', { key, body: { website_id: site, title, auto_approve_brief: true } });
    expect(r.status).toBe(202);
    const id = r.body.content_id as string;
    await until(`${title} written`, async () => (await call(b, 'GET', `/api/v1/content/${id}/status`, { key })).body.status === 'succeeded');
    return id;
  }

  it('given N edits of one version at once on two instances, then exactly one is saved and the others are 409 stale', async () => {
    const id = await article('Edited by many');
    const heading = (await call(a, 'GET', `/api/v1/content/${id}`, { key })).body.body.split('\n')[0];
    const rs = await Promise.all(
      Array.from({ length: N }, (_, i) =>
        call(i % 2 ? b : a, 'POST', `/api/v1/content/${id}/edit`, {
          key,
          body: { edits: [{ find: heading, replace: `# Edit ${i}` }], expected_version_number: 2 },
        }),
      ),
    );
    expect(rs.map((r) => r.status).sort()).toEqual([200, ...Array(N - 1).fill(409)]);
    const versions = (await call(b, 'GET', `/api/v1/content/${id}/versions`, { key })).body.versions;
    expect(versions.map((v: { version_number: number }) => v.version_number)).toEqual([3, 2, 1]);
  }, 120_000);

  it('given N items published at one URL at once on two instances, then one holds it and the others are 409 naming it', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push(await article(`Publisher ${i}`));
    const rs = await Promise.all(
      ids.map((id, i) =>
        call(i % 2 ? b : a, 'POST', `/api/v1/content/${id}/publish`, { key, body: { url: 'https://pipeline-racer.example.com/the-page' } }),
      ),
    );
    const won = rs.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    const holder = won[0].body.content_id;
    for (const r of rs.filter((x) => x.status !== 200)) expect(r).toMatchObject({ status: 409, body: { existing: { content_id: holder } } });
  }, 180_000);
});
