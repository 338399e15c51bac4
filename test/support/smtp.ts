// A real SMTP server in process (smtp-server) for the outbox tests: it keeps what it accepts, parsed with mailparser.
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { until } from './until';

export interface Received {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  mail: ParsedMail;
}

export interface SmtpRefusal {
  code: number;
  message: string;
}

export interface SmtpPolicy {
  /** decides on each message once its data has arrived (n: the how-manieth message for its first recipient, from 1) */
  onData?: (n: number, raw: Buffer) => SmtpRefusal | null | Promise<SmtpRefusal | null>;
  /** decides on each recipient: a refusal, or null to accept */
  onRecipient?: (address: string) => SmtpRefusal | null;
}

export interface TestSmtp {
  /** smtp://user:pass@127.0.0.1:port */
  url: string;
  /** the messages accepted (250), in order */
  received: Received[];
  /** what the server does with what comes next (every test sets its own) */
  policy: SmtpPolicy;
  /** messages whose data arrived for a recipient, accepted or not */
  dataCount(to: string): number;
  /** the messages accepted for a recipient */
  to(address: string): Received[];
  waitFor(address: string, count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export const SMTP_USER = 'aivis';
export const SMTP_PASS = 'p@ss:word/1';

const refusal = (r: SmtpRefusal) => Object.assign(new Error(r.message), { responseCode: r.code });

export async function startSmtp(policy: SmtpPolicy = {}): Promise<TestSmtp> {
  const received: Received[] = [];
  const data = new Map<string, number>();
  const options = { policy };
  const server = new SMTPServer({
    logger: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    onAuth(auth, _session, cb) {
      if (auth.username === SMTP_USER && auth.password === SMTP_PASS) return cb(null, { user: auth.username });
      return cb(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, cb) {
      const r = options.policy.onRecipient?.(address.address);
      return r ? cb(refusal(r)) : cb();
    },
    onData(stream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        const first = session.envelope.rcptTo[0]?.address ?? '';
        const n = (data.get(first) ?? 0) + 1;
        data.set(first, n);
        const raw = Buffer.concat(chunks);
        try {
          const r = (await options.policy.onData?.(n, raw)) ?? null;
          if (r) return cb(refusal(r));
          received.push({
            envelope: {
              from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
              to: session.envelope.rcptTo.map((a) => a.address),
            },
            raw,
            mail: await simpleParser(raw),
          });
          cb();
        } catch (err) {
          cb(err as Error);
        }
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as { port: number };
  const to = (address: string) => received.filter((r) => r.envelope.to.includes(address));
  return {
    url: `smtp://${encodeURIComponent(SMTP_USER)}:${encodeURIComponent(SMTP_PASS)}@127.0.0.1:${port}`,
    received,
    get policy() {
      return options.policy;
    },
    set policy(p: SmtpPolicy) {
      options.policy = p;
    },
    dataCount: (address) => data.get(address) ?? 0,
    to,
    waitFor: (address, count, timeoutMs = 20_000) =>
      until(`${count} message(s) for ${address} at the SMTP server`, async () => to(address).length >= count && to(address), timeoutMs),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
