import knexLib from 'knex';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { creditsProjection, recordCredit } from './projections/credits';
async function main() {
  const db = knexLib({ client: 'pg', connection: 'postgres://postgres@127.0.0.1:5432/apb', pool: { min: 1, max: 1 } });
  await db.raw('drop table if exists rm_credit_events, rm_credit_grants, rm_credit_days, rm_credit_hours, rm_credit_org_days, rm_credit_org_hours');
  await creditsProjection.migrate!(db as never);
  const v = process.argv[3] ?? 'base';
  const conn = await db.client.acquireConnection();
  const pid = (await conn.query('select pg_backend_pid() as p')).rows[0].p;
  await db.client.releaseConnection(conn);
  const cpu = () => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
  const org = randomUUID(), site = randomUUID();
  const c0 = cpu();
  const N = Number(process.argv[2] ?? 500);
  for (let c = 0; c < N; c++) {
    const rows = Array.from({ length: Number(process.env.BL ?? 40) }, () => ({ id: randomUUID(), organization_id: org, website_id: site, kind: 'answer', credits: 1, ref_id: randomUUID(), model: 'gpt-4o', occurred_at: new Date().toISOString() }));
    if (v === 'eventsonly') await db.transaction((trx) => trx.raw(`insert into rm_credit_events (id, organization_id, website_id, kind, credits, ref_id, model, occurred_at)
       select * from json_to_recordset(?::json) as x(id text, organization_id uuid, website_id uuid, kind text, credits numeric, ref_id text, model text, occurred_at timestamptz) on conflict (id) do nothing`, [JSON.stringify(rows)]));
    else if (v === 'empty') await db.transaction((trx) => trx.raw('select 1'));
    else await db.transaction((trx) => recordCredit(trx, rows));
  }
  console.log(v, `backend ${((cpu() - c0) * 1000 / (N * Number(process.env.BL ?? 40))).toFixed(1)} us/event`);
  await db.destroy();
}
main();
