import Markdown, { defaultUrlTransform } from 'react-markdown'

// Comments are markdown, shown through react-markdown: it builds React elements from the syntax
// tree and never inserts HTML, so a comment cannot run script in a reader's browser; link URLs
// pass its safe-protocol filter (no javascript:). Mentions are links to `user:<id>` (the form the
// API stores) and show as the person's name.

const mentionPrefix = 'user:'

const keepMentions = (url: string) => (url.startsWith(mentionPrefix) ? url : defaultUrlTransform(url))

/** `@[Name](user:id)` as the link `[@Name](user:id)`, so that the @ is part of the mention. */
const mentionLinks = (text: string) => text.replace(/@\[([^\]\n]{0,200})\]\(user:([A-Za-z0-9_-]{1,64})\)/g, '[@$1](user:$2)')

export function CommentMarkdown({ text }: { text: string }) {
  return (
    <div className="comment-body">
      <Markdown
        urlTransform={keepMentions}
        components={{
          a: ({ href, children }) =>
            href?.startsWith(mentionPrefix) ? (
              <span className="mention">{children}</span>
            ) : (
              <a href={href} target="_blank" rel="noopener noreferrer nofollow">
                {children}
              </a>
            ),
          img: ({ alt }) => <span className="muted">[image: {alt}]</span>,
        }}
      >
        {mentionLinks(text)}
      </Markdown>
    </div>
  )
}
