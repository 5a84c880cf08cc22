/**
 * Student list parser (pure). Instructors upload whatever their tools export: Excel/Sheets CSV (commas or, in
 * European locales, semicolons), Excel "Unicode text" (UTF-16 with tabs), address-book pastes
 * ("Jane Doe <jane@x.org>; john@y.org"), one address per line with \n, \r\n or \r, quoted fields (with embedded
 * delimiters and newlines), a header row, a byte-order mark, duplicates and mixed case.
 *
 * Rules: every field of every record is searched for addresses; an address is lower-cased and kept once.
 * A record without any "@" is the header when it is the first non-empty record, otherwise it is reported invalid.
 * A token that contains "@" but is not an address is reported invalid with the line it starts on.
 */

export const MAX_INVALID_REPORTED = 200;
const MAX_VALUE_LENGTH = 120;
const DELIMITERS = new Set([',', ';', '\t', '|']);

export interface ParsedRoster {
  /** Valid addresses, lower-cased, de-duplicated, in file order. */
  emails: string[];
  /** Lines that could not be read, 1-based line numbers of the file as a text editor shows them. */
  invalid: { line: number; value: string }[];
  /** How many more invalid entries exist beyond the ones listed (the list is bounded). */
  invalidOmitted: number;
  duplicates: number;
  headerSkipped: boolean;
}

/** Decodes the upload: UTF-16 (LE/BE, by BOM) as Excel writes "Unicode text", else UTF-8 (BOM dropped). */
export function decodeRosterFile(bytes: Uint8Array): string {
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const text = new TextDecoder('utf-8').decode(bytes);
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

interface RawRecord {
  line: number;
  fields: string[];
}

/** Splits text into records of fields. Quotes open a field only at its start; an unclosed quote is literal. */
export function splitRecords(text: string): RawRecord[] {
  const records: RawRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let recordLine = 1;
  let atFieldStart = true;
  let i = 0;
  const endRecord = () => {
    fields.push(field);
    records.push({ line: recordLine, fields });
    fields = [];
    field = '';
    atFieldStart = true;
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (atFieldStart && ch === '"') {
      const close = closingQuote(text, i + 1);
      if (close >= 0) {
        const inner = text.slice(i + 1, close);
        field += inner.replace(/""/g, '"');
        line += countNewlines(inner);
        i = close + 1;
        atFieldStart = false;
        continue;
      }
    }
    if (ch === '\r' || ch === '\n') {
      endRecord();
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line += 1;
      recordLine = line;
      continue;
    }
    if (DELIMITERS.has(ch)) {
      fields.push(field);
      field = '';
      atFieldStart = true;
      i += 1;
      continue;
    }
    if (atFieldStart && (ch === ' ' || ch === '\u00a0')) {
      i += 1; // leading blanks before an opening quote
      continue;
    }
    field += ch;
    atFieldStart = false;
    i += 1;
  }
  if (field !== '' || fields.length > 0) endRecord();
  return records;
}

function closingQuote(text: string, from: number): number {
  let j = from;
  while (j < text.length) {
    const k = text.indexOf('"', j);
    if (k < 0) return -1;
    if (text[k + 1] === '"') {
      j = k + 2;
      continue;
    }
    return k;
  }
  return -1;
}

function countNewlines(s: string): number {
  const m = s.match(/\r\n|\r|\n/g);
  return m ? m.length : 0;
}

// Local part: the dot-atom of RFC 5322; domain: dot-separated labels, a TLD of letters (or punycode).
const LOCAL = /^[a-z0-9!#$%&'*+/=?^_`{}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{}~-]+)*$/;
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/** True for an address the product can send mail to (lower-case input). */
export function isEmail(addr: string): boolean {
  if (addr.length > 254) return false;
  const at = addr.lastIndexOf('@');
  if (at <= 0 || at !== addr.indexOf('@')) return false;
  const local = addr.slice(0, at);
  const labels = addr.slice(at + 1).split('.');
  if (local.length > 64 || !LOCAL.test(local) || labels.length < 2) return false;
  return labels.every((l) => LABEL.test(l)) && TLD.test(labels.at(-1)!);
}

/** Address candidates of one field: "<…>" contents, whitespace-separated tokens containing "@". */
function candidates(field: string): string[] {
  const out: string[] = [];
  const bracketed = field.match(/<[^<>]*>/g);
  const rest = bracketed ? field.replace(/<[^<>]*>/g, ' ') : field;
  for (const b of bracketed ?? []) out.push(b.slice(1, -1));
  for (const token of rest.split(/[\s\u00a0]+/)) if (token.includes('@')) out.push(token);
  return out
    .map((t) => t.trim().replace(/^mailto:/i, '').replace(/^["'([<]+|["')\].,:>]+$/g, ''))
    .filter((t) => t.includes('@') && !/^@[^@]*$/.test(t)); // "@handle" columns are not addresses
}

function clip(value: string): string {
  const v = value.replace(/\s+/g, ' ').trim();
  return v.length > MAX_VALUE_LENGTH ? `${v.slice(0, MAX_VALUE_LENGTH - 1)}…` : v;
}

/** Parses a decoded student list. */
export function parseRoster(text: string): ParsedRoster {
  const seen = new Set<string>();
  const emails: string[] = [];
  const invalid: { line: number; value: string }[] = [];
  let invalidCount = 0;
  let duplicates = 0;
  let headerSkipped = false;
  let sawContent = false;
  const bad = (line: number, value: string) => {
    invalidCount += 1;
    if (invalid.length < MAX_INVALID_REPORTED) invalid.push({ line, value: clip(value) });
  };

  for (const rec of splitRecords(text)) {
    const fields = rec.fields.map((f) => f.trim()).filter((f) => f !== '');
    if (fields.length === 0) continue;
    const first = !sawContent;
    sawContent = true;
    const found = fields.flatMap(candidates);
    if (found.length === 0) {
      if (first && !fields.some((f) => f.includes('@'))) headerSkipped = true;
      else bad(rec.line, fields.join(', '));
      continue;
    }
    for (const raw of found) {
      const addr = raw.toLowerCase();
      if (!isEmail(addr)) {
        bad(rec.line, raw);
        continue;
      }
      if (seen.has(addr)) {
        duplicates += 1;
        continue;
      }
      seen.add(addr);
      emails.push(addr);
    }
  }
  return { emails, invalid, invalidOmitted: invalidCount - invalid.length, duplicates, headerSkipped };
}

/** Accepted upload names: the spec's .csv and .txt. */
export function isRosterFileName(name: string | undefined): boolean {
  return !!name && /\.(csv|txt)$/i.test(name.trim());
}
