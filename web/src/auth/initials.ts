/** Avatar text (spec §9): first and last initials of the display name, uppercased; one word gives one letter. */
export function initials(displayName: string): string {
  const words = displayName.trim().split(/\s+/).filter(Boolean);
  const first = words[0];
  if (!first) return '?';
  const last = words.length > 1 ? words[words.length - 1] : undefined;
  return (firstChar(first) + (last ? firstChar(last) : '')).toUpperCase();
}

function firstChar(word: string): string {
  return Array.from(word)[0] ?? '';
}
