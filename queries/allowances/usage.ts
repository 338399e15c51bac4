import type { Knex } from 'knex';

/** One period of an organization's allowance: reserved (jobs under way) and consumed count as used. */
export async function allowanceUsage(
  db: Knex,
  organizationId: string,
  allowance: string,
  period: string,
): Promise<{ used: number; reserved: number; consumed: number }> {
  const rows = await db('rm_allowance_reservations')
    .where({ organization_id: organizationId, allowance, period })
    .groupBy('state')
    .select('state')
    .sum<{ state: string; n: string }[]>('amount as n');
  const of = (s: string) => Number(rows.find((r) => r.state === s)?.n ?? 0);
  return { used: of('reserved') + of('consumed'), reserved: of('reserved'), consumed: of('consumed') };
}
