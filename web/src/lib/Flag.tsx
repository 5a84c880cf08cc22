import type { ReactNode } from 'react';
import type { CountryId } from '@hyperdesk/contract';

/**
 * Country flags drawn inline: emoji flags are not rendered by Chrome on Windows (it shows the two letters) nor on
 * systems without a colour emoji font, and Chrome is the product's only browser.
 */
const SHAPES: Record<CountryId, { viewBox: string; body: ReactNode }> = {
  DE: {
    viewBox: '0 0 3 2',
    body: (
      <>
        <rect width="3" height="2" fill="#000" />
        <rect y="0.667" width="3" height="1.333" fill="#DD0000" />
        <rect y="1.333" width="3" height="0.667" fill="#FFCE00" />
      </>
    ),
  },
  IN: {
    viewBox: '0 0 3 2',
    body: (
      <>
        <rect width="3" height="2" fill="#FF9933" />
        <rect y="0.667" width="3" height="0.667" fill="#fff" />
        <rect y="1.333" width="3" height="0.667" fill="#138808" />
        <circle cx="1.5" cy="1" r="0.26" fill="none" stroke="#000080" strokeWidth="0.06" />
        <circle cx="1.5" cy="1" r="0.05" fill="#000080" />
      </>
    ),
  },
  ES: {
    viewBox: '0 0 3 2',
    body: (
      <>
        <rect width="3" height="2" fill="#AA151B" />
        <rect y="0.5" width="3" height="1" fill="#F1BF00" />
      </>
    ),
  },
  UK: {
    viewBox: '0 0 60 30',
    body: (
      <>
        <rect width="60" height="30" fill="#012169" />
        <path d="M0,0 L60,30 M60,0 L0,30" stroke="#fff" strokeWidth="6" />
        <path d="M0,0 L60,30 M60,0 L0,30" stroke="#C8102E" strokeWidth="2" />
        <path d="M30,0 v30 M0,15 h60" stroke="#fff" strokeWidth="10" />
        <path d="M30,0 v30 M0,15 h60" stroke="#C8102E" strokeWidth="6" />
      </>
    ),
  },
};

export function Flag({ country, size = 14 }: { country: CountryId; size?: number }) {
  const shape = SHAPES[country];
  return (
    <svg
      viewBox={shape.viewBox}
      width={Math.round(size * 1.5)}
      height={size}
      preserveAspectRatio="none"
      aria-hidden="true"
      focusable="false"
      style={{ verticalAlign: '-2px', borderRadius: 2, boxShadow: '0 0 0 1px rgba(19,26,46,0.12)' }}
    >
      {shape.body}
    </svg>
  );
}

/** Flag and country name, for summaries and machine cards. */
export function CountryName({ country, label }: { country: CountryId; label: string }) {
  return (
    <span>
      <Flag country={country} /> {label}
    </span>
  );
}
