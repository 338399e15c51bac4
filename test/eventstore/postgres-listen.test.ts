import { afterAll, beforeAll, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/db';
import { sleep } from '../support/events';
import { until } from '../support/until';
import { onPostgresServer } from '../support/suites';

const suite = onPostgresServer('Postgres LISTEN test', 'embedded PGlite listens in process');

suite('Postgres: one listening connection for every channel of an instance', () => {
  let d: TestDatabase;
  beforeAll(async () => {
    d = await freshDatabase(2);
  });
  afterAll(async () => {
    await d?.close();
  });

  /** the backends of this database whose last statement was a LISTEN: the listening connections */
  const LISTENING = "from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and query ilike 'listen %'";
  const listeners = async () => Number((await d.db.raw(`select count(*)::int as n ${LISTENING}`)).rows[0].n);
  const terminateListener = () => d.db.raw(`select pg_terminate_backend(pid) ${LISTENING}`);
  const notify = (channel: string, payload: string) => d.db.raw('select pg_notify(?, ?)', [channel, payload]);

  it('given listeners on three channels, when each is notified, then each hears only its own, all over one connection; stopped, the connection ends', async () => {
    // given
    const heard: Record<string, string[]> = { a: [], b: [], c: [] };
    const stopA = await d.listen('aivis_listen_a', (p) => heard.a.push(p));
    const [stopB, stopC] = await Promise.all([
      d.listen('aivis_listen_b', (p) => heard.b.push(p)),
      d.listen('aivis_listen_c', (p) => heard.c.push(p)),
    ]);
    // when
    await notify('aivis_listen_a', 'one');
    await notify('aivis_listen_b', 'two');
    await notify('aivis_listen_c', 'three');
    // then
    await until('every channel heard', async () => heard.a.length + heard.b.length + heard.c.length === 3, 5000, 10);
    expect(heard).toEqual({ a: ['one'], b: ['two'], c: ['three'] });
    expect(await listeners()).toBe(1);
    // when one stops, the others still hear and the stopped one does not
    await stopB();
    await notify('aivis_listen_b', 'unheard');
    await notify('aivis_listen_a', 'four');
    await until('a heard again', async () => heard.a.length === 2, 5000, 10);
    await sleep(50);
    expect(heard.b).toEqual(['two']);
    // when the last ones stop, the connection ends
    await stopA();
    await stopC();
    await until('no listening connection', async () => (await listeners()) === 0, 5000, 20);
  });

  it('given two listeners on one channel, when the listening backend is terminated, then it reconnects and both hear again', async () => {
    // given
    const heard: string[] = [];
    const stop1 = await d.listen('aivis_listen_x', (p) => heard.push(`1:${p}`));
    const stop2 = await d.listen('aivis_listen_x', (p) => heard.push(`2:${p}`));
    await notify('aivis_listen_x', 'before');
    await until('both heard', async () => heard.length === 2, 5000, 10);
    // when
    await terminateListener();
    // then: within the reconnect's second, a notification is heard by both again
    await until(
      'heard after the reconnect',
      async () => {
        await notify('aivis_listen_x', 'after');
        await sleep(50);
        return heard.some((h) => h === '1:after') && heard.some((h) => h === '2:after');
      },
      10_000,
      100,
    );
    expect(await listeners()).toBe(1);
    await stop1();
    await stop2();
    await until('no listening connection', async () => (await listeners()) === 0, 5000, 20);
  });

  it('given the listening backend terminated, when its last listener stops before the reconnect, then no connection is opened again', async () => {
    // given
    const stop = await d.listen('aivis_listen_y', () => undefined);
    expect(await listeners()).toBe(1);
    await terminateListener();
    await until('the backend gone', async () => (await listeners()) === 0, 5000, 20);
    // when: stopped within the reconnect's second
    await stop();
    // then: past that second and the next, nothing listens
    await sleep(2500);
    expect(await listeners()).toBe(0);
  });
});
