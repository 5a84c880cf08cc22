import { useEffect } from 'react';

/** Sets the document title and meta description of a public page (search results and shared links show them). */
export function usePageMeta(title: string, description: string): void {
  useEffect(() => {
    document.title = title;
    let tag = document.head.querySelector<HTMLMetaElement>('meta[name="description"]');
    if (!tag) {
      tag = document.createElement('meta');
      tag.name = 'description';
      document.head.appendChild(tag);
    }
    tag.content = description;
  }, [title, description]);
}
