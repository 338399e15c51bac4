import { describe, expect, it } from 'vitest';
import {
  comparableHost,
  domainOf,
  extractUrls,
  hostOf,
  isComparableHostWithin,
  isHostWithinDomain,
  isTrackingParam,
  isUrlAtOrBelow,
  normalizeUrl,
  rootDomain,
  suffix,
  tryNormalizeUrl,
} from '../../src/domain/urls';

describe('normalizeUrl', () => {
  it.each([
    // scheme, host case, www.
    { given: 'https://example.com/path', then: 'example.com/path' },
    { given: 'http://example.com/path', then: 'example.com/path' },
    { given: 'HTTPS://WWW.Example.COM/Path', then: 'example.com/Path' },
    { given: 'example.com/path', then: 'example.com/path' },
    { given: 'www.example.com/path', then: 'example.com/path' },
    { given: '//example.com/path', then: 'example.com/path' },
    { given: '  https://example.com/path  ', then: 'example.com/path' },
    { given: 'https://blog.example.com/a', then: 'blog.example.com/a' },
    { given: 'https://www2.example.com/a', then: 'www2.example.com/a' },
    { given: 'https://example.com./a', then: 'example.com/a' },
    { given: 'https://user:pw@example.com/a', then: 'example.com/a' },
    // root keeps its slash
    { given: 'https://example.com', then: 'example.com/' },
    { given: 'https://example.com/', then: 'example.com/' },
    { given: 'https://www.example.com//', then: 'example.com/' },
    { given: 'example.com', then: 'example.com/' },
    { given: 'https://example.com/?b=2&a=1', then: 'example.com/?a=1&b=2' },
    { given: 'https://example.com?utm_source=x', then: 'example.com/' },
    // trailing slash elsewhere
    { given: 'https://example.com/blog/', then: 'example.com/blog' },
    { given: 'https://example.com/blog///', then: 'example.com/blog' },
    { given: 'https://example.com/blog/?x=1', then: 'example.com/blog?x=1' },
    // fragment
    { given: 'https://example.com/a#section', then: 'example.com/a' },
    { given: 'https://example.com/#top', then: 'example.com/' },
    { given: 'https://example.com/a?x=1#frag', then: 'example.com/a?x=1' },
    // tracking parameters
    { given: 'https://example.com/a?utm_source=g&utm_medium=cpc&utm_campaign=c&utm_term=t&utm_content=x', then: 'example.com/a' },
    { given: 'https://example.com/a?gclid=1&fbclid=2&msclkid=3&mc_cid=4&mc_eid=5', then: 'example.com/a' },
    { given: 'https://example.com/a?UTM_Source=g&GCLID=1&id=7', then: 'example.com/a?id=7' },
    { given: 'https://example.com/a?utm_id=9&page=2', then: 'example.com/a?page=2' },
    { given: 'https://example.com/a?utm=keep', then: 'example.com/a?utm=keep' },
    // query sorted, encoding kept, empty pairs dropped
    { given: 'https://example.com/a?z=1&a=2&m=3', then: 'example.com/a?a=2&m=3&z=1' },
    { given: 'https://example.com/a?b=2&a=2&a=1', then: 'example.com/a?a=1&a=2&b=2' },
    { given: 'https://example.com/a?&&b=1&', then: 'example.com/a?b=1' },
    { given: 'https://example.com/a?q=a%20b&flag', then: 'example.com/a?flag&q=a%20b' },
    { given: 'https://example.com/a?', then: 'example.com/a' },
    // path is case-sensitive and dot segments resolve
    { given: 'https://example.com/A/b/../C', then: 'example.com/A/C' },
    // ports: default dropped, others kept
    { given: 'https://example.com:443/a', then: 'example.com/a' },
    { given: 'http://example.com:80/a', then: 'example.com/a' },
    { given: 'https://example.com:8443/a', then: 'example.com:8443/a' },
    { given: 'example.com:8080/a', then: 'example.com:8080/a' },
    { given: 'localhost:3000', then: 'localhost:3000/' },
    // internationalized host is punycoded
    { given: 'https://www.bücher.de/x', then: 'xn--bcher-kva.de/x' },
  ])('given $given, then $then', ({ given, then }) => {
    expect(normalizeUrl(given)).toBe(then);
  });

  it('given tracking-parameter variants of one page, then one normalized URL', () => {
    const variants = [
      'https://www.example.com/pricing/',
      'http://example.com/pricing?utm_source=newsletter',
      'example.com/pricing#plans',
      'https://EXAMPLE.com/pricing?gclid=abc&fbclid=def',
    ];
    expect(new Set(variants.map(normalizeUrl))).toEqual(new Set(['example.com/pricing']));
  });

  it.each([
    { given: '', error: /empty/ },
    { given: '   ', error: /empty/ },
    { given: 'not a url', error: /invalid URL/ },
    { given: 'foo', error: /host "foo" is not a domain/ },
    { given: 'mailto:a@example.com', error: /only http and https/ },
    { given: 'ftp://example.com/file', error: /only http and https/ },
    { given: 'javascript:alert(1)', error: /only http and https/ },
    { given: 'https://', error: /invalid URL/ },
  ])('given $given, then it throws $error', ({ given, error }) => {
    expect(() => normalizeUrl(given)).toThrow(error);
    expect(tryNormalizeUrl(given)).toBeNull();
  });
});

describe('isTrackingParam', () => {
  it.each([
    ['utm_source', true],
    ['UTM_CAMPAIGN', true],
    ['utm_anything', true],
    ['gclid', true],
    ['fbclid', true],
    ['msclkid', true],
    ['mc_cid', true],
    ['mc_eid', true],
    ['utm', false],
    ['id', false],
    ['page', false],
  ] as const)('%s -> %s', (name, expected) => {
    expect(isTrackingParam(name)).toBe(expected);
  });
});

describe('hostOf and domainOf', () => {
  it.each([
    { given: 'https://www.Example.com/a?b#c', then: 'example.com' },
    { given: 'example.com', then: 'example.com' },
    { given: 'Blog.Example.com/path', then: 'blog.example.com' },
    { given: 'https://example.com:8080/x', then: 'example.com' },
    { given: 'https://shop.acme.co.uk', then: 'shop.acme.co.uk' },
    { given: 'https://acme.myshopify.com/products', then: 'acme.myshopify.com' },
    { given: 'not a url', then: null },
    { given: '', then: null },
  ])('given $given, then $then', ({ given, then }) => {
    expect(hostOf(given)).toBe(then);
    expect(domainOf(given)).toBe(then);
  });
});

describe('isHostWithinDomain', () => {
  it.each([
    { host: 'example.com', domain: 'example.com', then: true },
    { host: 'blog.example.com', domain: 'example.com', then: true },
    { host: 'a.b.example.com', domain: 'example.com', then: true },
    { host: 'www.example.com', domain: 'example.com', then: true },
    { host: 'EXAMPLE.com', domain: 'www.example.com', then: true },
    { host: 'example.com', domain: 'blog.example.com', then: false },
    { host: 'notexample.com', domain: 'example.com', then: false },
    { host: 'example.com.evil.io', domain: 'example.com', then: false },
    { host: 'example.co', domain: 'example.com', then: false },
    { host: '', domain: 'example.com', then: false },
    { host: 'example.com', domain: '', then: false },
    { host: null, domain: 'example.com', then: false },
  ])('given host $host and domain $domain, then $then', ({ host, domain, then }) => {
    expect(isHostWithinDomain(host, domain)).toBe(then);
    // each side parsed once (the sources read compares a page of hosts with every entity): the same answer
    expect(isComparableHostWithin(comparableHost(host), comparableHost(domain))).toBe(then);
  });

  it('given hosts and domains parsed once, then comparableHost is the bare host (null when unusable)', () => {
    expect(comparableHost('WWW.Example.com')).toBe('example.com');
    expect(comparableHost('https://blog.example.com/a?b')).toBe('blog.example.com');
    expect(comparableHost('  ')).toBeNull();
    expect(comparableHost(undefined)).toBeNull();
    expect(isComparableHostWithin(null, 'example.com')).toBe(false);
  });
});

describe('isUrlAtOrBelow', () => {
  it.each([
    { url: 'https://acme.com', base: 'https://acme.com', then: true },
    { url: 'https://www.acme.com/', base: 'acme.com', then: true },
    { url: 'http://acme.com/products/x', base: 'https://acme.com', then: true },
    { url: 'acme.com/shop', base: 'https://acme.com/shop/', then: true },
    { url: 'acme.com/shop/item?id=1', base: 'https://acme.com/shop', then: true },
    { url: 'acme.com/shopping', base: 'https://acme.com/shop', then: false },
    { url: 'acme.com/', base: 'https://acme.com/shop', then: false },
    { url: 'blog.acme.com', base: 'https://acme.com', then: false },
    { url: 'acme.co.uk', base: 'https://acme.com', then: false },
    { url: 'rival.com', base: 'https://acme.com', then: false },
    { url: 'acme.com:8080/x', base: 'https://acme.com', then: false },
    { url: 'not a url', base: 'https://acme.com', then: false },
  ])('given $url under $base, then $then', ({ url, base, then }) => {
    expect(isUrlAtOrBelow(url, base)).toBe(then);
  });
});

describe('extractUrls', () => {
  it.each([
    { when: 'no URL', text: 'Acme is a great brand.', then: [] },
    { when: 'empty text', text: '', then: [] },
    { when: 'a URL ending a sentence', text: 'See https://acme.com/pricing.', then: ['https://acme.com/pricing'] },
    { when: 'a URL in parentheses', text: 'Acme (https://acme.com/docs) is good.', then: ['https://acme.com/docs'] },
    {
      when: 'a URL with balanced parentheses',
      text: 'Read https://en.wikipedia.org/wiki/Acme_(company), ok',
      then: ['https://en.wikipedia.org/wiki/Acme_(company)'],
    },
    { when: 'a Markdown link', text: 'Try [Acme](https://acme.com/a?x=1) now', then: ['https://acme.com/a?x=1'] },
    { when: 'a bold Markdown URL', text: '**https://acme.com**', then: ['https://acme.com'] },
    { when: 'angle brackets', text: '<https://acme.com/x>', then: ['https://acme.com/x'] },
    { when: 'quotes', text: 'href="http://acme.com/x" and \'https://b.io\'', then: ['http://acme.com/x', 'https://b.io'] },
    { when: 'a bare www link', text: 'Visit www.acme.com/shop!', then: ['www.acme.com/shop'] },
    { when: 'a www link inside a URL', text: 'https://www.acme.com/a and www.rival.com', then: ['https://www.acme.com/a', 'www.rival.com'] },
    { when: 'several URLs with a repeat', text: 'https://a.com, https://b.com; https://a.com?', then: ['https://a.com', 'https://b.com'] },
    { when: 'trailing punctuation runs', text: 'Sources: https://a.com/x?y=1...!', then: ['https://a.com/x?y=1'] },
    { when: 'full-width punctuation', text: '参见https://acme.cn/a。谢谢', then: ['https://acme.cn/a'] },
    { when: 'a bare domain without www', text: 'acme.com is nice', then: [] },
    { when: 'an email address', text: 'mail sales@www.acme.com', then: [] },
    { when: 'a scheme with no host', text: 'https:// is a prefix', then: [] },
    { when: 'upper-case scheme', text: 'HTTPS://ACME.COM/X', then: ['HTTPS://ACME.COM/X'] },
  ])('given $when, then $then', ({ text, then }) => {
    expect(extractUrls(text)).toEqual(then);
  });
});

describe('suffix and rootDomain', () => {
  it.each([
    { host: 'example.com', sfx: 'com', root: 'example.com' },
    { host: 'blog.example.com', sfx: 'com', root: 'example.com' },
    { host: 'www.example.com', sfx: 'com', root: 'example.com' },
    { host: 'a.b.c.example.org', sfx: 'org', root: 'example.org' },
    { host: 'shop.acme.co.uk', sfx: 'co.uk', root: 'acme.co.uk' },
    { host: 'acme.co.uk', sfx: 'co.uk', root: 'acme.co.uk' },
    { host: 'news.bbc.co.uk', sfx: 'co.uk', root: 'bbc.co.uk' },
    { host: 'www.abc.net.au', sfx: 'net.au', root: 'abc.net.au' },
    { host: 'store.acme.com.au', sfx: 'com.au', root: 'acme.com.au' },
    { host: 'acme.co.jp', sfx: 'co.jp', root: 'acme.co.jp' },
    { host: 'acme.com.br', sfx: 'com.br', root: 'acme.com.br' },
    { host: 'acme.github.io', sfx: 'github.io', root: 'acme.github.io' },
    { host: 'docs.acme.github.io', sfx: 'github.io', root: 'acme.github.io' },
    { host: 'example.uk', sfx: 'uk', root: 'example.uk' },
    { host: 'co.uk', sfx: 'co.uk', root: 'co.uk' },
    { host: 'Example.COM', sfx: 'com', root: 'example.com' },
    { host: 'https://www.blog.example.co.uk/a?b', sfx: 'co.uk', root: 'example.co.uk' },
    { host: '192.168.0.1', sfx: '', root: '192.168.0.1' },
    { host: 'localhost', sfx: '', root: 'localhost' },
    { host: '', sfx: '', root: '' },
    { host: 'not a host', sfx: '', root: '' },
  ])('given $host, then suffix $sfx and root $root', ({ host, sfx, root }) => {
    expect(suffix(host)).toBe(sfx);
    expect(rootDomain(host)).toBe(root);
  });
});
