import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, stat } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { cleanText } from '../pages/html';
import { parseMailbox, redactAddresses } from './address';
import { cutText } from '../domain/text';

/** One message on its way: the composed bytes and the envelope. */
export interface Outgoing {
  emailId: string;
  from: string;
  to: string;
  raw: Buffer;
  /** ends the attempt (a timeout): the connection is closed */
  signal: AbortSignal;
}

export interface MailTransport {
  readonly kind: 'smtp' | 'file';
  /** resolves once the server (or the disk) has the message; the answer is the server's reply line */
  send(message: Outgoing): Promise<{ response: string | null }>;
  /** whether an interrupted attempt had already delivered the email (only a transport that can look may say so) */
  delivered?(emailId: string): Promise<boolean>;
  close(): void;
}

const LOOPBACK = (host: string) => host === 'localhost' || host === '::1' || (isIP(host) === 4 && host.startsWith('127.'));

/**
 * nodemailer's options for SMTP_URL. TLS: `smtps://` speaks TLS from the first byte (port 465 by default); `smtp://`
 * must upgrade with STARTTLS before the credentials or the message go out (port 587 by default), and a server that
 * does not offer it is an error, never a fall back to plain text; certificates are verified against the host name
 * (NODE_EXTRA_CA_CERTS adds a private CA). The one exception: `smtp://` to a loopback address (a local relay or a
 * mail catcher) is plain SMTP, since the connection does not leave the machine.
 */
export function smtpOptions(smtpUrl: string): SMTPTransport.Options {
  const u = new URL(smtpUrl);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const secure = u.protocol === 'smtps:';
  const local = !secure && LOOPBACK(host);
  return {
    host,
    port: u.port ? Number(u.port) : secure ? 465 : 587,
    secure,
    requireTLS: !secure && !local,
    ignoreTLS: local,
    tls: { servername: isIP(host) ? undefined : host, minVersion: 'TLSv1.2' },
    auth: u.username ? { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) } : undefined,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
    // nodemailer's own logging would print the envelope (and with debug the message): never
    logger: false,
    debug: false,
  };
}

export function createSmtpTransport(smtpUrl: string): MailTransport {
  const transporter = nodemailer.createTransport(smtpOptions(smtpUrl));
  return {
    kind: 'smtp',
    async send(m) {
      const from = parseMailbox(m.from)?.address;
      if (!from) throw Object.assign(new Error('MAIL_FROM is not one address'), { code: 'ECONFIG' });
      const info = await transporter.sendMail({ envelope: { from, to: [m.to] }, raw: m.raw, signal: m.signal });
      return { response: typeof info.response === 'string' ? oneLine(info.response) : null };
    },
    close: () => transporter.close(),
  };
}

/**
 * `.eml` files in a folder (the embedded default): `<email id>.eml`, written to a temporary name and renamed into
 * place, so a file that exists is whole, and an email whose file exists was delivered (exactly once here).
 */
export function createFileTransport(dir: string): MailTransport {
  const fileOf = (emailId: string) => join(dir, `${emailId}.eml`);
  return {
    kind: 'file',
    async delivered(emailId) {
      return stat(fileOf(emailId)).then(
        () => true,
        () => false,
      );
    },
    async send(m) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const tmp = join(dir, `.${m.emailId}.${randomBytes(6).toString('hex')}.tmp`);
      // the body may carry an acceptance link: readable by the server's user only
      const file = await open(tmp, 'wx', 0o600);
      try {
        await file.writeFile(m.raw);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(tmp, fileOf(m.emailId));
      return { response: `written to ${m.emailId}.eml` };
    },
    close() {},
  };
}

const oneLine = (s: string) => cutText(redactAddresses(cleanText(s).replace(/\s+/g, ' ').trim()), 500);

export interface SendFailure {
  /** the server refused for good (5xx): no attempt will do better */
  permanent: boolean;
  /** the attempt ended without the server's answer to the message: it may have been delivered */
  ambiguous: boolean;
  /** one line, recipient addresses removed */
  reason: string;
}

// the connection was never made: nothing can have been sent
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// failures before the message is handed over: configuration, TLS, login, envelope
const BEFORE_DATA = new Set(['ECONFIG', 'EDNS', 'ETLS', 'EAUTH', 'EENVELOPE', 'EMESSAGE', 'EREQUIRETLS']);

/**
 * What a failed send means. 5xx is permanent, 4xx and network trouble pass; a login refused (535) counts as passing,
 * since fixing SMTP_URL's credentials is the operator's to do within the retries. Without a reply to the message the
 * attempt is ambiguous unless it failed before the message could have gone out (conservative: a later success is
 * then marked as a possible duplicate).
 */
export function classifySendError(err: unknown): SendFailure {
  const e = (err ?? {}) as { code?: string; originalCode?: string; responseCode?: number; message?: string; name?: string };
  const code = e.code ?? e.name ?? 'Error';
  const reason = oneLine(`${code}: ${e.message ?? String(err)}`);
  if (typeof e.responseCode === 'number') return { permanent: e.responseCode >= 500 && code !== 'EAUTH', ambiguous: false, reason };
  const before = BEFORE_DATA.has(code) || NOT_CONNECTED.has(e.originalCode ?? '') || NOT_CONNECTED.has(code);
  return { permanent: false, ambiguous: !before, reason };
}
