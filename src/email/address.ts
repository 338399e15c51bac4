import addressparser from 'nodemailer/lib/addressparser';

export interface Mailbox {
  name: string;
  address: string;
}

// one local part and one domain, nothing a header or an SMTP command could be bent with
const ADDRESS = /^[^\s@<>()[\]",;:\\]+@[^\s@<>()[\]",;:\\]+$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** One mailbox (`Name <a@b>` or `a@b`), or null for anything else (several, a group, no address, control characters). */
export function parseMailbox(value: string): Mailbox | null {
  if (CONTROL.test(value)) return null;
  const parsed = addressparser(value, { flatten: false });
  if (parsed.length !== 1) return null;
  const m = parsed[0];
  if (m.group || !m.address || !ADDRESS.test(m.address)) return null;
  return { name: m.name, address: m.address };
}

/** The domain of an address (the part after the last @). */
export const domainOfAddress = (address: string): string => address.slice(address.lastIndexOf('@') + 1).toLowerCase();

/** Email addresses in a text (a server's answer often repeats the recipient) replaced, for logs and events. */
export const redactAddresses = (text: string): string => text.replace(/<?[^\s<>@"',;:()]+@[^\s<>@"',;:()]+>?/g, '<address>');
