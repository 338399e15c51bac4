import { allowancesProjection } from '../../projections/allowances';
import type { AreaManifest } from './manifest';

/** Allowances reserved by requests and jobs. */
export const allowances: AreaManifest<'allowances'> = {
  readModels: { allowances: allowancesProjection },
  notInFeed: [{ why: 'bookkeeping of the limits a request or a job counts against', types: ['AllowanceReserved', 'AllowanceSettled'] }],
};
