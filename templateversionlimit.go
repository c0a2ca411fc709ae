package mailroom

// DefaultMaxTemplateVersions is how many versions one template may have
// unless the operator says otherwise (serve --max-template-versions). A
// version is made only by an explicit save (PUT), never by a send, and
// each may hold two 1 MiB sources, so the bound caps one template's
// storage at about 2 GiB; a thousand is a save on every working day for
// four years, which no honest user meets. Every version stays readable
// (messages and the log name the version they used), so the bound refuses
// the save past it instead of removing an old one.
const DefaultMaxTemplateVersions = 1000
