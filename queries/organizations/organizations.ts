import type { Knex } from 'knex';

/** The organization's pitch reports per UTC month (org:create --pitch-allowance); 0 for an unknown organization. */
export async function pitchAllowance(db: Knex, organizationId: string): Promise<number> {
  const org = await db('rm_organizations').where('id', organizationId).first('pitch_allowance');
  return Number(org?.pitch_allowance ?? 0);
}

/** Whether the organization has the feature enabled. */
export async function hasFeature(db: Knex, organizationId: string, feature: string): Promise<boolean> {
  const row = await db('rm_organizations').where('id', organizationId).first('features');
  return Array.isArray(row?.features) && row.features.includes(feature);
}
