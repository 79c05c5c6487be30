/**
 * Headers of everything a share link serves (its page and its trace): kept out of search engines,
 * caches and the Referer of links followed from it.
 */
export const sharedPageHeaders = { 'x-robots-tag': 'noindex, nofollow', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' } as const
