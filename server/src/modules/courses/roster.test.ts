import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeRosterFile, isEmail, isRosterFileName, MAX_INVALID_REPORTED, parseRoster, splitRecords } from './roster';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const load = (name: string) => parseRoster(decodeRosterFile(readFileSync(path.join(FIXTURES, name))));

describe('roster parser on real-world files', () => {
  it('reads an Excel CSV with BOM, CRLF, quoted commas and doubled quotes', () => {
    const r = load('excel-comma.csv');
    expect(r.emails).toEqual(['jane.doe@example.com', 'john.smith@example.com', 'siobhan.obrien@uni.example.ie']);
    expect(r.headerSkipped).toBe(true);
    expect(r.invalid).toEqual([]);
  });

  it('reads a European semicolon CSV, folds case and drops duplicates', () => {
    const r = load('excel-semicolon.csv');
    expect(r.emails).toEqual(['anna.mueller@schule.example.de', 'jose.garcia@escuela.example.es']);
    expect(r.duplicates).toBe(1);
    expect(r.invalid).toEqual([]);
  });

  it('reads Google Sheets quotes with an embedded newline and keeps line numbers right', () => {
    const r = load('google-sheets.csv');
    expect(r.emails).toEqual(['priya@college.example.in', 'ravi.kumar@college.example.in', 'lena@example.org']);
    expect(r.duplicates).toBe(1);
    const recs = splitRecords(decodeRosterFile(readFileSync(path.join(FIXTURES, 'google-sheets.csv'))));
    expect(recs.map((x) => x.line)).toEqual([1, 2, 3, 5, 6]);
  });

  it('reads a plain list with blank lines, spaces, upper case, duplicates and no final newline', () => {
    const r = load('plain-list.txt');
    expect(r.emails).toEqual(['alice@example.com', 'bob@example.com', 'carol@example.com', 'dave@example.com']);
    expect(r.headerSkipped).toBe(false);
    expect(r.duplicates).toBe(1);
  });

  it('reads an address-book paste with names, angle brackets and mailto:', () => {
    const r = load('outlook-paste.txt');
    expect(r.emails).toEqual([
      'jane@x.example.org',
      'john@y.example.org',
      'kim@z.example.org',
      'lee.chen@x.example.org',
      'pat@x.example.org',
    ]);
    expect(r.invalid).toEqual([]);
  });

  it('reads classic Mac line endings', () => {
    expect(load('classic-mac.txt').emails).toEqual(['ana@example.com', 'ben@example.com', 'cleo@example.com']);
  });

  it('reads Excel "Unicode text" (UTF-16 LE with tabs)', () => {
    const r = load('excel-unicode.txt');
    expect(r.emails).toEqual(['ola@example.no', 'zoe@example.com']);
    expect(r.headerSkipped).toBe(true);
  });

  it('reads Windows-1252 names without losing the addresses', () => {
    expect(load('latin1-names.csv').emails).toEqual(['francois.leger@lycee.example.fr', 'helene@lycee.example.fr']);
  });

  it('reads a quoted single-column file with a quoted header and plus addressing', () => {
    const r = load('single-column-header.csv');
    expect(r.emails).toEqual(['alice@example.com', 'zoe+course@example.co.uk']);
    expect(r.headerSkipped).toBe(true);
  });

  it('reads a Moodle participants export', () => {
    expect(load('moodle-participants.csv').emails).toEqual(['amal.haddad@student.example.edu', 'tom.ng@student.example.edu']);
  });

  it('reports invalid lines with their line numbers and keeps the good ones', () => {
    const r = load('with-invalid.csv');
    expect(r.emails).toEqual(['first@example.com', 'second@example.com', 'third@example.com']);
    expect(r.invalid).toEqual([
      { line: 3, value: 'john@' },
      { line: 4, value: 'not an email' },
      { line: 5, value: 'jane@@example.com' },
      { line: 6, value: 'foo@bar' },
      { line: 9, value: '@twitterhandle' },
      { line: 10, value: 'broken@exa' },
    ]);
  });
});

describe('roster parser edge cases', () => {
  it('treats only the first record without "@" as a header', () => {
    const r = parseRoster('Email\nx@example.com\nStudents of group B\ny@example.com\n');
    expect(r.headerSkipped).toBe(true);
    expect(r.emails).toEqual(['x@example.com', 'y@example.com']);
    expect(r.invalid).toEqual([{ line: 3, value: 'Students of group B' }]);
  });

  it('treats an unclosed quote as a literal character instead of swallowing the file', () => {
    const r = parseRoster('"a@example.com\nb@example.com\n');
    expect(r.emails).toEqual(['a@example.com', 'b@example.com']);
  });

  it('answers nothing for an empty or blank file', () => {
    expect(parseRoster('').emails).toEqual([]);
    expect(parseRoster('\r\n\n ,, \n').emails).toEqual([]);
    expect(parseRoster(decodeRosterFile(new Uint8Array([0xef, 0xbb, 0xbf]))).emails).toEqual([]);
  });

  it('bounds the invalid list and counts the rest', () => {
    const lines = Array.from({ length: MAX_INVALID_REPORTED + 5 }, (_, i) => `bad${i}@`).join('\n');
    const r = parseRoster(`ok@example.com\n${lines}`);
    expect(r.invalid).toHaveLength(MAX_INVALID_REPORTED);
    expect(r.invalidOmitted).toBe(5);
  });

  it('validates addresses', () => {
    for (const ok of ['a@b.co', 'first.last+tag@sub.example.org', "o'brien@example.ie", 'x@xn--bcher-kva.example'])
      expect(isEmail(ok), ok).toBe(true);
    for (const bad of ['a@b', '@b.com', 'a@', 'a..b@c.com', '.a@c.com', 'a@-b.com', 'a@b.c', 'a b@c.com', `${'x'.repeat(65)}@c.com`])
      expect(isEmail(bad), bad).toBe(false);
  });

  it('accepts .csv and .txt names only', () => {
    expect(isRosterFileName('Students.CSV')).toBe(true);
    expect(isRosterFileName('list.txt')).toBe(true);
    expect(isRosterFileName('list.xlsx')).toBe(false);
    expect(isRosterFileName('csv')).toBe(false);
    expect(isRosterFileName(undefined)).toBe(false);
  });
});
