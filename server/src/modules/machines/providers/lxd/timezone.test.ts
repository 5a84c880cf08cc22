import { describe, expect, it } from 'vitest';
import { desktopTimeZone } from './provider';

describe("a desktop's clock zone", () => {
  it('keeps IANA zones, and says UTC for none, an unknown name or anything shaped like a path or an option', () => {
    expect(desktopTimeZone('Europe/Berlin')).toBe('Europe/Berlin');
    expect(desktopTimeZone('Asia/Kolkata')).toBe('Asia/Kolkata');
    expect(desktopTimeZone('America/Argentina/Buenos_Aires')).toBe('America/Argentina/Buenos_Aires');
    expect(desktopTimeZone('UTC')).toBe('UTC');
    for (const bad of [undefined, '', 'Mars/Olympus_Mons', '../../etc/passwd', '/etc/localtime', 'Europe/Berlin\nX=1', '-u', 'Europe//Berlin']) {
      expect(desktopTimeZone(bad)).toBe('UTC');
    }
  });
});
