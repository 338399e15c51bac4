import { describe, expect, it } from 'vitest';
import { decideClaim, decideGiveUp, decideOutcome, Email } from '../../commands/email/email';
import { requestEmail } from '../../commands/email/request-email';
import { ConfigError, loadConfig } from '../../src/config';
import type { DomainEvent } from '../../src/domain/events';
import { parseMailbox, redactAddresses } from '../../src/email/address';
import { renderEmail } from '../../src/email/templates';
import { classifySendError, smtpOptions } from '../../src/email/transport';
import { given } from '../support/given';

const ID = '00000000-0000-4000-8000-000000000001';
const requested: DomainEvent = {
  type: 'EmailRequested',
  data: { email_id: ID, template: 'invitation', to: 'a@example.com', params: {}, requested_at: '2026-01-01T00:00:00.000Z' },
};
const sending = (attempt: number, lease_until: string): DomainEvent => ({
  type: 'EmailSending',
  data: { email_id: ID, attempt, message_id: `<${ID}@x.test>`, lease_until },
});
const NOW = new Date('2026-01-01T00:01:00.000Z');
const claim = { message_id: `<${ID}@x.test>`, now: NOW, leaseMs: 90_000 };

describe('claiming an attempt', () => {
  it('given a requested email, when claimed, then attempt 1 is held until the lease ends', () => {
    given(Email, requested)
      .when((s) => decideClaim(s, claim))
      .then([{ type: 'EmailSending', data: { email_id: ID, attempt: 1, message_id: `<${ID}@x.test>`, lease_until: '2026-01-01T00:02:30.000Z' } }]);
  });

  it('given a claim whose lease has not ended, when claimed again, then it is held: nothing is appended', () => {
    const { result } = given(Email, requested, sending(1, '2026-01-01T00:01:30.000Z'))
      .when((s) => decideClaim(s, claim))
      .then([]);
    expect(result).toEqual({ claimed: false, why: 'held' });
  });

  it('given a claim whose lease has ended (its worker died), when claimed, then the next attempt takes over, uncertain', () => {
    const { result } = given(Email, requested, sending(1, '2026-01-01T00:00:30.000Z'))
      .when((s) => decideClaim(s, claim))
      .then((events) => expect(events).toMatchObject([{ type: 'EmailSending', data: { attempt: 2 } }]));
    expect(result).toEqual({ claimed: true, attempt: 2, uncertain: true });
  });

  it('given an attempt deferred with a definite refusal, when claimed, then the next attempt is not uncertain', () => {
    const deferred: DomainEvent = {
      type: 'EmailDeferred',
      data: { email_id: ID, attempt: 1, reason: '451', retry_at: NOW.toISOString(), ambiguous: false },
    };
    const { result } = given(Email, requested, sending(1, '2026-01-01T00:02:00.000Z'), deferred)
      .when((s) => decideClaim(s, claim))
      .then((events) => expect(events).toHaveLength(1));
    expect(result).toEqual({ claimed: true, attempt: 2, uncertain: false });
  });

  it('given a sent or failed email, when claimed, then it is settled; given none, unknown', () => {
    const sent: DomainEvent = {
      type: 'EmailSent',
      data: { email_id: ID, attempt: 1, message_id: 'm', transport: 'smtp', response: null, possible_duplicate: false },
    };
    expect(
      given(Email, requested, sending(1, NOW.toISOString()), sent)
        .when((s) => decideClaim(s, claim))
        .then([]).result,
    ).toEqual({ claimed: false, why: 'settled' });
    expect(
      given(Email)
        .when((s) => decideClaim(s, claim))
        .then([]).result,
    ).toEqual({ claimed: false, why: 'unknown' });
  });
});

describe('recording an outcome', () => {
  const sent = { kind: 'sent' as const, message_id: 'm', transport: 'smtp' as const, response: '250 ok' };

  it('given a worker that lost its claim to a takeover, when its copy went out, then the delivery is still recorded (once)', () => {
    given(Email, requested, sending(1, '2026-01-01T00:00:30.000Z'), sending(2, '2026-01-01T00:03:00.000Z'))
      .when((s) => decideOutcome(s, 1, sent, false))
      .then([
        { type: 'EmailSent', data: { email_id: ID, attempt: 1, message_id: 'm', transport: 'smtp', response: '250 ok', possible_duplicate: false } },
      ]);
  });

  it('given a worker that lost its claim, when its attempt failed, then it records nothing (the attempt that holds the claim decides)', () => {
    given(Email, requested, sending(1, '2026-01-01T00:00:30.000Z'), sending(2, '2026-01-01T00:03:00.000Z'))
      .when((s) => decideOutcome(s, 1, { kind: 'failed', reason: 'x', permanent: true }, false))
      .then([]);
  });

  it('given an email already sent, when another copy reports, then nothing more is recorded', () => {
    const done: DomainEvent = {
      type: 'EmailSent',
      data: { email_id: ID, attempt: 2, message_id: 'm', transport: 'smtp', response: null, possible_duplicate: true },
    };
    given(Email, requested, sending(1, NOW.toISOString()), sending(2, NOW.toISOString()), done)
      .when((s) => decideOutcome(s, 1, sent, false))
      .then([]);
  });

  it('given an email with nothing to send, when given up, then it fails for good, unless a live claim holds it', () => {
    given(Email, requested)
      .when((s) => decideGiveUp(s, 'erased', NOW))
      .then([{ type: 'EmailFailed', data: { email_id: ID, attempts: 0, reason: 'erased', permanent: true } }]);
    given(Email, requested, sending(1, '2026-01-01T00:05:00.000Z'))
      .when((s) => decideGiveUp(s, 'erased', NOW))
      .then([]);
  });
});

describe('requesting an email', () => {
  const ctx = { store: null as never, organizationId: ID, actor: { kind: 'system' as const, user_id: null, api_key_id: null } };
  const params = { inviter: 'Ada', organization: 'Zentro', accept_url: 'https://app.example/accept?t=1', expires_at: '2026-03-15T09:30:00Z' };

  it('given a bad recipient or bad parameters, then the request is refused naming the field, before anything is stored', async () => {
    expect(await requestEmail(ctx, { template: 'invitation', to: 'not an address', params })).toEqual({
      kind: 'invalid',
      message: 'to must be one email address',
    });
    expect(await requestEmail(ctx, { template: 'invitation', to: 'Bob <b@example.com>', params })).toEqual({
      kind: 'invalid',
      message: 'to must be one email address',
    });
    expect(await requestEmail(ctx, { template: 'invitation', to: 'a@example.com,b@example.com', params })).toEqual({
      kind: 'invalid',
      message: 'to must be one email address',
    });
    expect(
      await requestEmail(ctx, { template: 'invitation', to: 'b@example.com', params: { ...params, accept_url: 'javascript:alert(1)' } }),
    ).toEqual({
      kind: 'invalid',
      message: 'params.accept_url must be an http(s) URL',
    });
    expect(
      await requestEmail(ctx, { template: 'invitation', to: 'b@example.com', params: { ...params, organization: undefined as never } }),
    ).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/^params\.organization /) });
    expect(await requestEmail(ctx, { template: 'nope' as never, to: 'b@example.com', params })).toMatchObject({
      kind: 'invalid',
      message: expect.stringMatching(/^template /),
    });
  });
});

describe('the invitation template', () => {
  const params = {
    inviter: 'Ada <script>',
    organization: 'Zentro & "Co"',
    accept_url: 'https://app.example/accept?token=abc&x=1',
    expires_at: '2026-03-15T09:30:00Z',
  };

  it('given names with markup, when rendered, then the HTML escapes them and the text keeps them as written', () => {
    const r = renderEmail('invitation', params);
    if ('error' in r) throw new Error(r.error);
    expect(r.subject).toBe('Ada <script> invited you to Zentro & "Co" on aivis');
    expect(r.text).toContain('Ada <script> invited you to join Zentro & "Co" on aivis.');
    expect(r.text).toContain('https://app.example/accept?token=abc&x=1');
    expect(r.html).toContain('Ada &lt;script&gt; invited you to join Zentro &amp; &quot;Co&quot; on aivis.');
    expect(r.html).toContain('href="https://app.example/accept?token=abc&amp;x=1"');
    expect(r.html).not.toContain('<script>');
  });

  it('given no inviter, a role and the targets of a bulk invite, when rendered, then one email names them all', () => {
    const r = renderEmail('invitation', { ...params, inviter: null, role: 'Viewer', targets: ['Site A', 'Site B'] });
    if ('error' in r) throw new Error(r.error);
    expect(r.subject).toBe('You are invited to Zentro & "Co" on aivis');
    expect(r.text).toContain('You have been invited to join Zentro & "Co" on aivis as Viewer.');
    expect(r.text).toContain('You will have access to: Site A, Site B.');
    expect(r.html).toContain('<li>Site A</li><li>Site B</li>');
  });

  it('given a newline or control characters in a name, then the subject stays one line', () => {
    const r = renderEmail('invitation', { ...params, inviter: 'Ada\r\nBcc: x@evil.example\u0007' });
    if ('error' in r) throw new Error(r.error);
    expect(r.subject).toBe('Ada Bcc: x@evil.example invited you to Zentro & "Co" on aivis');
  });

  it('given a stored request for a template that does not exist or parameters that no longer fit, then rendering says why', () => {
    expect(renderEmail('welcome', {})).toEqual({ error: 'unknown email template "welcome"' });
    expect(renderEmail('invitation', { ...params, expires_at: 'soon' })).toMatchObject({
      error: expect.stringMatching(/^the invitation template's params\.expires_at /),
    });
  });
});

describe('configuration and transport', () => {
  it('given SMTP_URL and MAIL_FROM, when loaded, then they are kept; a bad one is one line naming it', () => {
    expect(loadConfig({ SMTP_URL: 'smtp://u:p@mail.example:587', MAIL_FROM: 'aivis <no-reply@example.com>' })).toMatchObject({
      smtpUrl: 'smtp://u:p@mail.example:587',
      mailFrom: 'aivis <no-reply@example.com>',
    });
    expect(() => loadConfig({ SMTP_URL: 'http://mail.example' })).toThrow(
      new ConfigError('invalid configuration: SMTP_URL must be a URL starting with smtp:// or smtps://'),
    );
    expect(() => loadConfig({ MAIL_FROM: 'a@example.com, b@example.com' })).toThrow(
      new ConfigError("invalid configuration: MAIL_FROM must be one address, e.g. 'aivis <no-reply@example.com>'"),
    );
  });

  it('given no MAIL_FROM, then the public host names the sender, or localhost when it is an address', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://aivis.example.com' }).mailFrom).toBe('aivis <no-reply@aivis.example.com>');
    expect(loadConfig({}).mailFrom).toBe('aivis <no-reply@localhost>');
    expect(loadConfig({ SMTP_URL: undefined }).smtpUrl).toBeNull();
  });

  it('given smtp:// to a remote host, then STARTTLS is required; smtps:// is TLS from the start; loopback is plain; credentials are decoded', () => {
    expect(smtpOptions('smtp://user%40x:p%3Ass@mail.example')).toMatchObject({
      host: 'mail.example',
      port: 587,
      secure: false,
      requireTLS: true,
      ignoreTLS: false,
      auth: { user: 'user@x', pass: 'p:ss' },
      tls: { servername: 'mail.example', minVersion: 'TLSv1.2' },
      logger: false,
      debug: false,
    });
    expect(smtpOptions('smtps://mail.example')).toMatchObject({ port: 465, secure: true, requireTLS: false });
    expect(smtpOptions('smtp://127.0.0.1:2525')).toMatchObject({ port: 2525, secure: false, requireTLS: false, ignoreTLS: true, auth: undefined });
    expect(smtpOptions('smtp://[::1]:25')).toMatchObject({ host: '::1', ignoreTLS: true });
  });

  it('given send errors, then 5xx is permanent, 4xx and network trouble pass, and only a possibly sent message is ambiguous', () => {
    expect(classifySendError({ code: 'EENVELOPE', responseCode: 550, message: 'Recipient command failed: 550 <bob@x.com> no' })).toEqual({
      permanent: true,
      ambiguous: false,
      reason: 'EENVELOPE: Recipient command failed: 550 <address> no',
    });
    expect(classifySendError({ code: 'EMESSAGE', responseCode: 451, message: 'try later' })).toMatchObject({ permanent: false, ambiguous: false });
    expect(classifySendError({ code: 'EAUTH', responseCode: 535, message: 'Invalid login' })).toMatchObject({ permanent: false, ambiguous: false });
    expect(classifySendError({ code: 'ESOCKET', originalCode: 'ECONNREFUSED', message: 'connect ECONNREFUSED' })).toMatchObject({
      permanent: false,
      ambiguous: false,
    });
    expect(classifySendError({ code: 'ECONNECTION', message: 'Connection closed unexpectedly' })).toMatchObject({
      permanent: false,
      ambiguous: true,
    });
    expect(classifySendError({ name: 'AbortError', code: 'EABORT', message: 'aborted' })).toMatchObject({ permanent: false, ambiguous: true });
  });

  it('parses one mailbox and nothing else, and hides addresses in text', () => {
    expect(parseMailbox('aivis <no-reply@example.com>')).toEqual({ name: 'aivis', address: 'no-reply@example.com' });
    for (const bad of ['', 'nobody', 'a@b.c, d@e.f', 'group: a@b.c;', 'a@b.c\r\nBcc: e@f.g']) expect(parseMailbox(bad)).toBeNull();
    expect(redactAddresses('550 5.1.1 <bob@example.com>: rejected; also eve@example.org')).toBe('550 5.1.1 <address>: rejected; also <address>');
  });
});
