import { z } from 'zod';
import { cleanText, type Html, html } from '../pages/html';

/**
 * The emails aivis sends, by name: each with the schema of its parameters and how it renders (a subject, a text
 * body and an HTML body escaped by html``). A request names a template and gives its parameters; the worker renders
 * them when it sends, so the log holds parameters, never a body.
 */

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

interface EmailTemplate<S extends z.ZodType> {
  params: S;
  render(params: z.output<S>): RenderedEmail;
}

const define = <S extends z.ZodType>(t: EmailTemplate<S>): EmailTemplate<S> => t;

const Name = z.string().trim().min(1).max(200);
const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2000);

/** One line, no control characters: what a subject or a name in a sentence may hold. */
const line = (s: string): string => cleanText(s).replace(/\s+/g, ' ').trim();

const when = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });
const formatExpiry = (iso: string): string => `${when.format(new Date(iso))} UTC`;

/** The frame of every HTML email: inline styles only (mail clients drop most else), one column, no images. */
function emailHtml(title: string, body: Html): string {
  return `<!doctype html>\n${html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body style="margin:0;padding:0;background:#f4f6f9;color:#1b2330;font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;font-size:16px;line-height:1.5">
<div style="max-width:36rem;margin:0 auto;padding:24px 16px">
<div style="background:#ffffff;border:1px solid #d9dee5;border-radius:8px;padding:24px">
${body}
</div>
<p style="color:#5b6574;font-size:13px;margin:16px 0 0">Sent by aivis.</p>
</div>
</body></html>
`}`;
}

const invitation = define({
  params: z.object({
    /** who invited, as the app shows them (a name or an email); null when an API key did */
    inviter: Name.nullable(),
    organization: Name,
    /** the link that accepts the invitation (it carries the token) */
    accept_url: HttpUrl,
    expires_at: z.iso.datetime({ offset: true }),
    /** the role given, as the app names it */
    role: Name.optional(),
    /** the websites or groups of a bulk invite: one email names them all */
    targets: z.array(Name).max(50).optional(),
  }),
  render(p) {
    const inviter = p.inviter ? line(p.inviter) : null;
    const organization = line(p.organization);
    const as = p.role ? ` as ${line(p.role)}` : '';
    const lead = inviter
      ? `${inviter} invited you to join ${organization} on aivis${as}.`
      : `You have been invited to join ${organization} on aivis${as}.`;
    const subject = inviter ? `${inviter} invited you to ${organization} on aivis` : `You are invited to ${organization} on aivis`;
    const targets = (p.targets ?? []).map(line);
    const closing = `The link works once, until ${formatExpiry(p.expires_at)}. If you did not expect this invitation, you can ignore this email.`;
    const text = [
      'Hello,',
      '',
      lead,
      ...(targets.length ? ['', `You will have access to: ${targets.join(', ')}.`] : []),
      '',
      'Accept the invitation:',
      p.accept_url,
      '',
      closing,
      '',
    ].join('\n');
    const body = html`<h1 style="font-size:20px;line-height:1.3;margin:0 0 16px">Join ${organization} on aivis</h1>
<p style="margin:0 0 12px">${lead}</p>
${targets.length ? html`<p style="margin:0 0 12px">You will have access to:</p><ul style="margin:0 0 12px;padding-left:20px">${targets.map((t) => html`<li>${t}</li>`)}</ul>` : ''}
<p style="margin:20px 0"><a href="${p.accept_url}" style="display:inline-block;background:#1f5fbf;color:#ffffff;text-decoration:none;padding:10px 18px;border-radius:6px;font-weight:600">Accept the invitation</a></p>
<p style="margin:0 0 12px;font-size:14px;color:#5b6574">Or open this link: <a href="${p.accept_url}" style="color:#1f5fbf">${p.accept_url}</a></p>
<p style="margin:0;font-size:14px;color:#5b6574">${closing}</p>`;
    return { subject: line(subject), text, html: emailHtml(`Join ${organization} on aivis`, body) };
  },
});

const alert = define({
  params: z.object({ rule: Name, website: Name, summary: z.string().trim().min(1).max(1000), fired_at: z.iso.datetime({ offset: true }) }),
  render(p) {
    const summary = line(p.summary);
    const text = ['Hello,', '', `The alert rule "${line(p.rule)}" of ${line(p.website)} fired on ${formatExpiry(p.fired_at)}:`, '', summary, ''].join(
      '\n',
    );
    const body = html`<h1 style="font-size:20px;line-height:1.3;margin:0 0 16px">${line(p.rule)}</h1>
<p style="margin:0 0 12px">${line(p.website)}, ${formatExpiry(p.fired_at)}:</p>
<p style="margin:0 0 12px">${summary}</p>`;
    return { subject: line(`aivis alert: ${summary}`).slice(0, 200), text, html: emailHtml(line(p.rule), body) };
  },
});

const Num = z.number().finite();
const Day = z.iso.date();
const VERDICT_WORDS = { up: 'up', down: 'down', within_noise: 'within noise', insufficient_data: 'insufficient data' } as const;
const percent = (v: number | null) => (v === null ? '—' : `${Math.round(v * 10) / 10} %`);
const points = (v: number | null) => (v === null ? '—' : `${v > 0 ? '+' : ''}${Math.round(v * 10) / 10} pts`);

/** A table mail clients render: inline styles, cellpadding; every cell escaped. */
function emailTable(head: string[], rows: (string | number)[][]): Html {
  return html`<table role="presentation" cellpadding="0" cellspacing="0" border="0" width="100%" style="border-collapse:collapse;margin:0 0 20px">
<tr>${head.map((h) => html`<th style="text-align:left;padding:6px 8px;border-bottom:2px solid #d9dee5;font-size:13px;color:#5b6574">${h}</th>`)}</tr>
${rows.map((r) => html`<tr>${r.map((c) => html`<td style="padding:6px 8px;border-bottom:1px solid #e8ebf0;font-size:14px">${c}</td>`)}</tr>`)}
</table>`;
}

/** Text columns padded to their widest cell. */
function textTable(head: string[], rows: (string | number)[][]): string {
  const all = [head, ...rows.map((r) => r.map(String))];
  const widths = head.map((_, i) => Math.max(...all.map((r) => line(String(r[i])).length)));
  return all
    .map((r) =>
      r
        .map((c, i) => line(String(c)).padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const scheduledReport = define({
  params: z.object({
    website: Name,
    frequency: z.enum(['weekly', 'monthly']),
    start_date: Day,
    end_date: Day,
    report_url: HttpUrl,
    responses: Num,
    rates: z.array(z.object({ name: Name, is_self: z.boolean(), mention_rate: Num, ci95: z.tuple([Num, Num]).nullable() })).max(50),
    comparison: z
      .array(
        z.object({
          name: Name,
          current: Num.nullable(),
          previous: Num.nullable(),
          change: Num.nullable(),
          verdict: z.enum(['up', 'down', 'within_noise', 'insufficient_data']),
        }),
      )
      .max(50),
    sources: z.array(z.object({ domain: Name, retrieved: Num, cited: Num })).max(20),
  }),
  render(p) {
    const website = line(p.website);
    const period = `${p.start_date} to ${p.end_date}`;
    const title = `${website}: ${p.frequency} report, ${period}`;
    const rateRows = p.rates.map((r) => [
      `${line(r.name)}${r.is_self ? ' (you)' : ''}`,
      percent(r.mention_rate),
      r.ci95 ? `${percent(r.ci95[0])} to ${percent(r.ci95[1])}` : '—',
    ]);
    const rateHead = ['Brand', 'Mention rate', '95% interval'];
    const cmpRows = p.comparison.map((r) => [line(r.name), percent(r.previous), percent(r.current), points(r.change), VERDICT_WORDS[r.verdict]]);
    const cmpHead = ['Brand', 'Period before', 'This period', 'Change', 'Verdict'];
    const srcRows = p.sources.map((r) => [line(r.domain), r.retrieved, r.cited]);
    const srcHead = ['Source', 'Retrieved', 'Cited'];
    const section = (name: string, head: string[], rows: (string | number)[][], none: string) => ({
      text: [name, rows.length ? textTable(head, rows) : none, ''].join('\n'),
      html: html`<h2 style="font-size:16px;margin:20px 0 8px">${name}</h2>${rows.length ? emailTable(head, rows) : html`<p style="margin:0 0 12px;color:#5b6574">${none}</p>`}`,
    });
    const sections = [
      section('Mention rate', rateHead, rateRows, 'No answers in this period.'),
      section('Compared with the period before', cmpHead, cmpRows, 'No answers to compare.'),
      section('Top sources', srcHead, srcRows, 'No sources retrieved or cited in this period.'),
    ];
    const text = [
      'Hello,',
      '',
      `The ${p.frequency} report of ${website} for ${period} (${p.responses} answers):`,
      '',
      ...sections.map((x) => x.text),
      'The full report, with its charts:',
      p.report_url,
      '',
    ].join('\n');
    const body = html`<h1 style="font-size:20px;line-height:1.3;margin:0 0 16px">${title}</h1>
<p style="margin:0 0 12px">${p.responses} answers from ${period}.</p>
${sections.map((x) => x.html)}
<p style="margin:20px 0"><a href="${p.report_url}" style="display:inline-block;background:#1f5fbf;color:#ffffff;text-decoration:none;padding:10px 18px;border-radius:6px;font-weight:600">Open the full report</a></p>
<p style="margin:0;font-size:14px;color:#5b6574">Or open this link: <a href="${p.report_url}" style="color:#1f5fbf">${p.report_url}</a></p>`;
    return { subject: line(`aivis: ${title}`).slice(0, 200), text, html: emailHtml(title, body) };
  },
});

export const emailTemplates = { invitation, alert, scheduled_report: scheduledReport } as const;

export type TemplateName = keyof typeof emailTemplates;
export type TemplateParams<T extends TemplateName> = z.input<(typeof emailTemplates)[T]['params']>;
export const TEMPLATE_NAMES = Object.keys(emailTemplates) as [TemplateName, ...TemplateName[]];

export const isTemplateName = (name: string): name is TemplateName => Object.hasOwn(emailTemplates, name);

/** The parameters checked against the template's schema: the first problem names its field. */
export function checkParams(template: TemplateName, params: unknown): { ok: true; params: Record<string, unknown> } | { ok: false; message: string } {
  const r = (emailTemplates[template].params as z.ZodType).safeParse(params);
  if (r.success) return { ok: true, params: r.data as Record<string, unknown> };
  const i = r.error.issues[0];
  return { ok: false, message: `params.${i.path.join('.')} ${i.message}` };
}

/** Renders a stored request; an unknown template or parameters that no longer fit it are an error, not a throw. */
export function renderEmail(template: string, params: unknown): RenderedEmail | { error: string } {
  if (!isTemplateName(template)) return { error: `unknown email template ${JSON.stringify(template)}` };
  const checked = checkParams(template, params);
  if (!checked.ok) return { error: `the ${template} template's ${checked.message}` };
  return (emailTemplates[template] as EmailTemplate<z.ZodType>).render(checked.params);
}
