package events

import (
	"bytes"
	"fmt"
	"strings"
)

// TypeScript renders a catalog as the TypeScript module the UI imports its kinds from: a constant
// per kind named after it (RUN_TOOL_START for "run.tool_start"), a list per family (RUN_KINDS,
// and all of them by family in FAMILIES), ALL_KINDS and EventKind, the union of them all. header is the module's first comment, naming what
// generated it.
func TypeScript(header string, specs []Spec) ([]byte, error) {
	if err := Check(specs); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimSpace(header), "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	var families []string
	byFamily := map[string][]string{}
	var all []string
	for _, s := range specs {
		name := tsName(string(s.Kind))
		doc := s.PayloadName()
		if s.Doc != "" {
			doc = strings.TrimPrefix(doc+": "+s.Doc, ": ")
		}
		b.WriteString("\n")
		if doc != "" {
			fmt.Fprintf(&b, "/** %s */\n", doc)
		}
		fmt.Fprintf(&b, "export const %s = '%s';\n", name, s.Kind)
		all = append(all, name)
		if s.Kind == KindReset {
			continue
		}
		f := s.Kind.Family()
		if _, ok := byFamily[f]; !ok {
			families = append(families, f)
		}
		byFamily[f] = append(byFamily[f], name)
	}
	for _, f := range families {
		fmt.Fprintf(&b, "\n/** Every kind of the %s family. */\nexport const %s_KINDS = [%s] as const;\n",
			f, tsName(f), strings.Join(byFamily[f], ", "))
	}
	b.WriteString("\n/** The kinds of each family. */\nexport const FAMILIES = {\n")
	for _, f := range families {
		fmt.Fprintf(&b, "  %s: %s_KINDS,\n", f, tsName(f))
	}
	b.WriteString("} as const;\n")
	fmt.Fprintf(&b, "\n/** Every kind the runtime emits. */\nexport const ALL_KINDS = [%s] as const;\n", strings.Join(all, ", "))
	b.WriteString("\nexport type EventKind = (typeof ALL_KINDS)[number];\n")
	return b.Bytes(), nil
}

// tsName is a kind or family as a TypeScript constant's name: "run.tool_start" → RUN_TOOL_START.
func tsName(s string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(s))
}
