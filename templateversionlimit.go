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

// TooManyTemplateVersions is the refusal of a save past a template's limit
// max, the template having n versions: a validation_error on name, as the
// template and domain limits are, since the content is fine and the
// template full. What to do is to save the content as a new template,
// under a new name.
func TooManyTemplateVersions(n, max int) error {
	var v Validator
	v.Add("name", "this template has %d versions, the most it may have (%d); save the new content as a new template under another name (the operator sets the limit with serve --max-template-versions)", n, max)
	return v.Err()
}
