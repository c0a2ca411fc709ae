package mailroom

// DefaultMaxDomains is how many sending domains an account may have unless
// the operator says otherwise (serve --max-domains). Each domain costs an
// RSA key when it is added and DNS look-ups for as long as it exists
// (about 40 while pending, then one a day): a thousand keep that to a
// minute of one core at most and a few look-ups a minute, while leaving
// room for a platform that sends for its own customers' domains.
const DefaultMaxDomains = 1000
