import { emailsProjection } from '../../projections/emails';
import type { AreaManifest } from './manifest';

/** Outgoing mail. */
export const emails: AreaManifest<'emails'> = {
  readModels: { emails: emailsProjection },
  notInFeed: [
    {
      why: 'delivery of mail: the invitation or change that sent it is the entry',
      types: ['EmailRequested', 'EmailSending', 'EmailSent', 'EmailDeferred', 'EmailFailed'],
    },
  ],
};
