import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeHtml, html, joinHtml, REFUSED_URL, safeUrl, trustedHtml } from '../../src/pages/html';

const s = (h: { toString(): string }) => h.toString();

describe('html`` escapes every interpolation', () => {
  it('given a script tag in a name, when it is shown as text, then it is text', () => {
    expect(s(html`<p>${'<script>alert(1)</script>'}</p>`)).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
  });

  it('given quotes in a value, when it is put in an attribute, then the attribute cannot be closed early', () => {
    expect(s(html`<a title="${'" onmouseover="alert(1)'}">x</a>`)).toBe('<a title="&quot; onmouseover=&quot;alert(1)">x</a>');
    expect(s(html`<a title='${"' onmouseover='alert(1)"}'>x</a>`)).toBe("<a title='&#39; onmouseover=&#39;alert(1)'>x</a>");
  });

  it('given an ampersand, when it is shown, then it is not read as an entity', () => {
    expect(s(html`<p>${'&lt; &amp; &#x3c;'}</p>`)).toBe('<p>&amp;lt; &amp;amp; &amp;#x3c;</p>');
  });

  it('given Html values, lists, numbers and nothing, when interpolated, then markup stays and nothing renders as empty', () => {
    const items = ['a<b', 'c'].map((x) => html`<li>${x}</li>`);
    expect(s(html`<ul>${items}</ul>${null}${undefined}${false}${0}`)).toBe('<ul><li>a&lt;b</li><li>c</li></ul>0');
    expect(s(html`<p>${trustedHtml('<b>ok</b>')}</p>`)).toBe('<p><b>ok</b></p>');
    expect(s(joinHtml(['<x>', html`<br>`], ', '))).toBe('&lt;x&gt;, <br>');
  });

  it('given a number that is not finite, when interpolated, then rendering fails rather than showing NaN', () => {
    expect(() => html`<p>${Number.NaN}</p>`).toThrow(/not a number/);
  });

  it('any string interpolated in text and in an attribute leaves no character that could open markup', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (x) => {
        const out = s(html`<p title="${x}">${x}</p>`);
        const inner = out.slice('<p title="'.length, -'</p>'.length).replace('">', '');
        expect(inner).not.toMatch(/[<>"']/);
        expect(inner.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&');
      }),
    );
  });
});

describe('URL attributes refuse script URLs', () => {
  const hostile = [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'java\nscript:alert(1)',
    '\u0001javascript:alert(1)',
    'vbscript:msgbox(1)',
    'data:text/html,<script>alert(1)</script>',
    '1javascript:alert(1)',
  ];
  for (const url of hostile) {
    it(`given ${JSON.stringify(url)} in an href, then the link goes nowhere`, () => {
      expect(safeUrl(url)).toBe(REFUSED_URL);
      expect(s(html`<a href="${url}">x</a>`)).toBe(`<a href="${REFUSED_URL}">x</a>`);
    });
  }

  it('given http, https, mailto and relative URLs, when put in an href, then they are kept (escaped)', () => {
    expect(s(html`<a href="${'https://example.com/?a=1&b="2"'}">x</a>`)).toBe('<a href="https://example.com/?a=1&amp;b=&quot;2&quot;">x</a>');
    for (const u of ['http://a.example/', 'mailto:x@example.com', '/r/abc', '#top', '?page=2', 'report/1', '//cdn.example/x']) {
      expect(safeUrl(u)).toBe(u);
    }
  });

  it('given a URL in src, action or xlink:href, then the same rule applies', () => {
    expect(s(html`<form action="${'javascript:x'}"></form>`)).toContain(REFUSED_URL);
    expect(s(html`<img src="${'data:image/svg+xml,<svg onload=alert(1)>'}">`)).toContain(REFUSED_URL);
    expect(s(html`<a xlink:href="${'javascript:x'}"></a>`)).toContain(REFUSED_URL);
  });

  it('given a value after a fixed start in an href, then the start decides the scheme', () => {
    expect(s(html`<a href="/r/${'javascript:alert(1)'}">x</a>`)).toBe('<a href="/r/javascript:alert(1)">x</a>');
  });
});

describe('control and bidi characters', () => {
  it('given bidi overrides and isolates in a name, when shown, then they are removed (the text cannot reorder what follows)', () => {
    expect(escapeHtml('abc\u202Efdp.exe')).toBe('abcfdp.exe');
    expect(escapeHtml('\u2066a\u2067b\u2068c\u2069\u202A\u202B\u202C\u202D')).toBe('abc');
  });

  it('given control characters, when shown, then they are removed but tab and newline stay', () => {
    expect(escapeHtml('a\u0000b\u0007c\u001bd\u007fe\u0085f\tg\nh')).toBe('abcdef\tg\nh');
  });

  it('given right-to-left letters and emoji, when shown, then they stay as they are', () => {
    expect(escapeHtml('שלום עולם مرحبا 👋🏽')).toBe('שלום עולם مرحبا 👋🏽');
  });

  it('given a lone surrogate, when shown, then it becomes the replacement character', () => {
    expect(escapeHtml('a\ud800b\udc00c')).toBe('a\ufffdb\ufffdc');
  });
});

describe('places escaping cannot make safe are refused when the template renders', () => {
  it('an unquoted attribute value', () => {
    expect(() => html`<a href=${'x'}>x</a>`).toThrow(/quote the attribute value/);
  });
  it('a style or event handler attribute', () => {
    expect(() => html`<p style="color:${'red'}">x</p>`).toThrow(/style, srcset or event handler/);
    expect(() => html`<p onclick="go('${'x'}')">x</p>`).toThrow(/style, srcset or event handler/);
  });
  it('inside script and style elements', () => {
    expect(() => html`<script>var a = ${'1'}</script>`).toThrow(/inside <script>/);
    expect(() => html`<style>p{color:${'red'}}</style>`).toThrow(/inside <style>/);
  });
  it('a string where attributes are written (only markup the code made may go there)', () => {
    expect(() => html`<p ${'onclick=alert(1)'}>x</p>`).toThrow(/only an Html value/);
    expect(s(html`<input ${trustedHtml('checked')}>`)).toBe('<input checked>');
  });
});
