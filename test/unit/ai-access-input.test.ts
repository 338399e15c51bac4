import { describe, expect, it } from 'vitest';
import { parseDomainInput } from '../../src/analysis/ai-access';

describe('AI access check input: accepted domains', () => {
  it.each([
    ['example.com', 'example.com'],
    ['  Example.COM  ', 'example.com'],
    ['www.example.co.uk', 'www.example.co.uk'],
    ['example.com.', 'example.com'],
    ['example.com/', 'example.com'],
    ['https://example.com', 'example.com'],
    ['HTTP://example.com/', 'example.com'],
    ['bücher.de', 'xn--bcher-kva.de'],
    ['https://münchen.de', 'xn--mnchen-3ya.de'],
    ['例え.テスト', 'xn--r8jz45g.xn--zckzah'],
    ['xn--bcher-kva.de', 'xn--bcher-kva.de'],
    ['a-b.example.org', 'a-b.example.org'],
    [`${'a'.repeat(63)}.com`, `${'a'.repeat(63)}.com`],
  ])('given %j, when parsed, then the domain is %j', (input, expected) => {
    expect(parseDomainInput(input)).toEqual({ domain: expected });
  });
});

describe('AI access check input: refused with a message naming the problem', () => {
  it.each([
    [42, 'domain must be a string'],
    [null, 'domain must be a string'],
    [undefined, 'domain must be a string'],
    [{ domain: 'example.com' }, 'domain must be a string'],
    ['', 'domain is required'],
    ['   ', 'domain is required'],
    ['example.com/pricing', 'domain must not include a path'],
    ['https://example.com/a/b', 'domain must not include a path'],
    ['example.com?x=1', 'domain must not include a query'],
    ['example.com/#top', 'domain must not include a fragment'],
    ['example.com:8080', 'domain must not include a port'],
    ['https://example.com:443', 'domain must not include a port'],
    ['user:secret@example.com', 'domain must not include credentials'],
    ['https://user@example.com', 'domain must not include credentials'],
    ['ftp://example.com', 'domain must not include a scheme other than http or https (got ftp://)'],
    ['javascript:alert(1)', 'domain must be a host name such as example.com'],
    ['93.184.216.34', 'domain must be a domain name, not an IP address'],
    ['10.0.0.1', 'domain must be a domain name, not an IP address'],
    ['http://127.0.0.1', 'domain must be a domain name, not an IP address'],
    ['2130706433', 'domain must be a domain name, not an IP address'],
    ['0x7f.1', 'domain must be a domain name, not an IP address'],
    ['::1', 'domain must be a domain name, not an IP address'],
    ['[2001:db8::1]', 'domain must be a domain name, not an IP address'],
    ['localhost', 'domain must be a public domain, not localhost'],
    ['app.localhost', 'domain must be a public domain, not localhost'],
    ['intranet', 'domain must have at least two labels, such as example.com'],
    ['printer.local', 'domain must be a public domain (.local is reserved for special use)'],
    ['db.internal', 'domain must be a public domain (.internal is reserved for special use)'],
    ['a..com', 'domain must not contain empty labels'],
    ['.example.com', 'domain must not contain empty labels'],
    [`${'a'.repeat(64)}.com`, `domain label "${'a'.repeat(20)}…" is longer than 63 characters`],
    [`${'abcdefghi.'.repeat(26)}com`, 'domain must be at most 253 characters'],
    ['foo_bar.com', 'domain label "foo_bar" may only contain letters, digits and inner hyphens'],
    ['-foo.com', 'domain label "-foo" may only contain letters, digits and inner hyphens'],
    ['*.example.com', 'domain contains characters that are not allowed in a host name'],
    ['exa mple.com', 'domain contains characters that are not allowed in a host name'],
    ['ex%41mple.com', 'domain contains characters that are not allowed in a host name'],
    ['x'.repeat(1001), 'domain is too long'],
  ])('given %j, when parsed, then the error is %j', (input, error) => {
    expect(parseDomainInput(input)).toEqual({ error });
  });

  it('given "a-b.example", when parsed, then the reserved .example name is refused', () => {
    expect(parseDomainInput('a-b.example')).toEqual({ error: 'domain must be a public domain (.example is reserved for special use)' });
  });
});
