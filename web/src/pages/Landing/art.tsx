/** Inline SVG artwork of the public pages: no image requests, scales with the text. Purely decorative. */

const ICONS = {
  gpu: 'M3 7h18v10H3zM7 17v3M11 17v3M15 17v3M7 10h4v4H7zM14 10h4M14 13h4',
  browser: 'M3 5h18v14H3zM3 9h18M6 7h.01M9 7h.01',
  clock: 'M12 3a9 9 0 1 0 0 18 9 9 0 0 0 0-18zM12 7v5l3 2',
  hours: 'M4 6h16v12H4zM8 10h8M8 14h5M9 3v3M15 3v3',
  folder: 'M3 6h6l2 2h10v10H3zM3 10h18',
  shield: 'M12 3l8 3v5c0 5-3.5 8.5-8 10-4.5-1.5-8-5-8-10V6zM9 12l2 2 4-4',
  class: 'M3 8l9-4 9 4-9 4zM7 10v5c0 1.5 2.2 3 5 3s5-1.5 5-3v-5M21 8v6',
  film: 'M4 4h16v16H4zM8 4v16M16 4v16M4 9h4M4 15h4M16 9h4M16 15h4',
  spark: 'M12 3v4M12 17v4M3 12h4M17 12h4M6 6l2.5 2.5M15.5 15.5L18 18M6 18l2.5-2.5M15.5 8.5L18 6',
  check: 'M5 12.5l4.5 4.5L19 7',
  wifi: 'M2 9a15 15 0 0 1 20 0M5 12.5a10 10 0 0 1 14 0M8.5 16a5 5 0 0 1 7 0M12 19.5h.01',
  book: 'M4 5a2 2 0 0 1 2-2h14v16H6a2 2 0 0 0-2 2zM4 5v16M8 7h8',
  users: 'M9 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8zM2 21c0-4 3-6 7-6s7 2 7 6M17 11a3 3 0 1 0 0-6M18 15c2.5.5 4 2.5 4 6',
} as const;

export type IconName = keyof typeof ICONS;

export function Icon({ name, size = 20 }: { name: IconName; size?: number }) {
  return (
    <svg viewBox="0 0 24 24" width={size} height={size} aria-hidden="true" focusable="false">
      <path d={ICONS[name]} fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}

/** A browser window showing an engine viewport: what using Hyperdesk looks like. */
export function HeroArt({ className }: { className?: string }) {
  return (
    <svg className={className} viewBox="0 0 480 340" aria-hidden="true" focusable="false">
      <defs>
        <linearGradient id="hd-sky" x1="0" y1="0" x2="0" y2="1">
          <stop offset="0" stopColor="#1e2a5a" />
          <stop offset="1" stopColor="#4f46e5" />
        </linearGradient>
        <linearGradient id="hd-ground" x1="0" y1="0" x2="0" y2="1">
          <stop offset="0" stopColor="#0e7490" />
          <stop offset="1" stopColor="#0b1020" />
        </linearGradient>
      </defs>
      <rect x="8" y="8" width="464" height="324" rx="16" fill="#f4f6fb" />
      <rect x="8" y="8" width="464" height="36" rx="16" fill="#d8deea" />
      <rect x="8" y="30" width="464" height="14" fill="#d8deea" />
      <circle cx="32" cy="26" r="5" fill="#f87171" />
      <circle cx="50" cy="26" r="5" fill="#fbbf24" />
      <circle cx="68" cy="26" r="5" fill="#34d399" />
      <rect x="92" y="17" width="300" height="18" rx="9" fill="#fff" />
      <rect x="104" y="23" width="120" height="6" rx="3" fill="#b7c0d6" />
      <g>
        <rect x="20" y="56" width="84" height="264" rx="6" fill="#1a2240" />
        <rect x="30" y="70" width="60" height="6" rx="3" fill="#4a5572" />
        <rect x="30" y="86" width="48" height="6" rx="3" fill="#4a5572" />
        <rect x="30" y="102" width="54" height="6" rx="3" fill="#06b6d4" />
        <rect x="30" y="118" width="40" height="6" rx="3" fill="#4a5572" />
        <rect x="30" y="134" width="56" height="6" rx="3" fill="#4a5572" />
      </g>
      <rect x="112" y="56" width="348" height="200" rx="6" fill="url(#hd-sky)" />
      <circle cx="392" cy="104" r="22" fill="#fde68a" opacity="0.9" />
      <path d="M112 210 L190 140 L236 180 L300 118 L372 190 L420 160 L460 196 L460 256 L112 256 Z" fill="#312e81" opacity="0.85" />
      <path d="M112 256 L112 224 L460 224 L460 256 Z" fill="url(#hd-ground)" />
      <g stroke="#67e8f9" strokeOpacity="0.45" strokeWidth="1">
        <path d="M112 236 H460 M112 246 H460" />
        <path d="M200 224 L170 256 M260 224 L250 256 M320 224 L330 256 M380 224 L410 256" />
      </g>
      <g transform="translate(266 168)">
        <path d="M0 -26 L26 -12 L26 16 L0 30 L-26 16 L-26 -12 Z" fill="#a5b4fc" />
        <path d="M0 -26 L26 -12 L0 2 L-26 -12 Z" fill="#e0e7ff" />
        <path d="M0 2 L26 -12 L26 16 L0 30 Z" fill="#6366f1" />
      </g>
      <rect x="112" y="264" width="348" height="56" rx="6" fill="#1a2240" />
      <rect x="124" y="276" width="64" height="32" rx="4" fill="#2b3566" />
      <rect x="196" y="276" width="64" height="32" rx="4" fill="#2b3566" />
      <rect x="268" y="276" width="64" height="32" rx="4" fill="#06b6d4" opacity="0.7" />
      <rect x="340" y="276" width="108" height="8" rx="4" fill="#4a5572" />
      <rect x="340" y="292" width="80" height="8" rx="4" fill="#4a5572" />
    </svg>
  );
}
