import { type Html, html } from './html';

/**
 * The MCP sign-in pages (ARCHITECTURE.md, "Sign-in"): email and password, then the consent naming the client. Plain
 * forms posting to the server (no script); each carries the interaction's CSRF token, never a key or a token.
 */

export interface SignInView {
  /** the form's address */
  action: string;
  csrf: string;
  /** the client's registered name (or its id) */
  client: string;
  email?: string;
  error?: string;
}

const masthead = (title: string, lead: Html) => html`<header class="masthead"><h1>${title}</h1><p class="muted">${lead}</p></header>`;

const errorNotice = (error: string | undefined) => (error ? html`<p class="notice error" role="alert" id="form-error">${error}</p>` : '');

export function signInBody(v: SignInView): Html {
  return html`${masthead('Sign in to aivis', html`<strong>${v.client}</strong> asks to connect to your aivis account.`)}
<section class="card">
${errorNotice(v.error)}
<form method="post" action="${v.action}" class="stack">
<input type="hidden" name="csrf" value="${v.csrf}">
<p><label for="email">Email</label><br>
<input id="email" name="email" type="email" autocomplete="username" required maxlength="320" value="${v.email ?? ''}" class="field"></p>
<p><label for="password">Password</label><br>
<input id="password" name="password" type="password" autocomplete="current-password" required maxlength="1024" class="field"></p>
<p><button type="submit" class="button primary">Sign in</button></p>
</form>
<p class="muted small">No account yet? Accept the invitation your organization sent you; an administrator can set a password with <code>npm run cli -- users:set-password --email you@example.com</code>.</p>
</section>`;
}

export interface ConsentView {
  action: string;
  csrf: string;
  client: string;
  /** where the user returns after deciding (the redirect URI's host) */
  returnsTo: string;
  email: string;
  organization: string;
  role: string;
}

export function consentBody(v: ConsentView): Html {
  return html`${masthead('Allow access?', html`<strong>${v.client}</strong> wants to use aivis on your behalf.`)}
<section class="card">
<p>Signed in as <strong>${v.email}</strong> in <strong>${v.organization}</strong>.</p>
<p>If you allow it, <strong>${v.client}</strong> can read and change what your role (<strong>${v.role}</strong>) lets you read and change in aivis, for up to 30 days. It never sees your password.</p>
<p class="muted small">You will return to ${v.returnsTo}.</p>
<form method="post" action="${v.action}">
<input type="hidden" name="csrf" value="${v.csrf}">
<p class="actions"><button type="submit" name="decision" value="allow" class="button primary">Allow</button>
<button type="submit" name="decision" value="deny" class="button">Deny</button></p>
</form>
</section>`;
}

export function signInProblemBody(title: string, message: string): Html {
  return html`${masthead(title, html``)}<section class="card"><p class="notice error" role="alert">${message}</p>
<p class="muted small">Start the sign-in again from your assistant.</p></section>`;
}
