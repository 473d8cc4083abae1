package dsl

// Encoders returns the family's encoders (its image encoder and projector,
// ast.go's Encoder), each as a file of its own that Check, EvalConfig and
// BuildEncoder read as they read an arch body: the encoder's items under
// the family's name, its blocks apart from the decoder's. Nil for a
// text-only family.
func Encoders(f *File) []*File {
	var out []*File
	for _, it := range f.Items {
		if e := it.Encoder; e != nil {
			out = append(out, &File{Pos: e.Pos, EndPos: e.EndPos, Name: f.Name, Items: e.Items, encoder: e, supers: map[string]map[string]*Block{}})
		}
	}
	return out
}

// EncoderName is the name of the encoder an Encoders file holds ("image"),
// "" for an arch body.
func EncoderName(f *File) string {
	if f.encoder == nil {
		return ""
	}
	return f.encoder.Name
}

// EncoderKey is the config.json object an encoder's config block binds
// (`in vision_config`), "" for the top level.
func EncoderKey(f *File) string {
	if f.encoder == nil {
		return ""
	}
	return f.encoder.Key
}

// EncoderScope is where a checkpoint may hold an Encoders file's weights
// (its `scope PATH as AS`): scope "vision_tower.vision_model." read as
// as "vision_tower."; both "" without a scope.
func EncoderScope(f *File) (scope, as string) {
	if f.encoder == nil || f.encoder.Scope == nil {
		return "", ""
	}
	for _, sg := range f.encoder.Scope.Segs {
		scope += sg.Name + "."
	}
	for _, sg := range f.encoder.As.Segs {
		as += sg.Name + "."
	}
	return scope, as
}

// inputs are the names a file's dataflow and blocks see as graph inputs:
// an encoder's input (pixels), or the decoder's tokens and, beside them,
// each encoder's output by the encoder's name.
func (f *File) inputs() []string {
	if f.encoder != nil {
		var names []string
		for _, p := range f.encoder.Params {
			names = append(names, p.Name)
		}
		return names
	}
	out := []string{"tokens"}
	for _, it := range f.Items {
		if it.Encoder != nil {
			out = append(out, it.Encoder.Name)
		}
	}
	return out
}

// output is the binding that is a file's result: the decoder's logits, or
// an encoder's output, bound to the encoder's name.
func (f *File) output() string {
	if f.encoder != nil {
		return f.encoder.Name
	}
	return "logits"
}

// mergeEncoders is the encoders of a family that extends another: the
// parent's, each replaced whole by a child encoder of the same name, then
// the child's new ones.
func mergeEncoders(base, child *File) []*Item {
	kids := map[string]*Item{}
	for _, it := range child.Items {
		if it.Encoder != nil {
			kids[it.Encoder.Name] = it
		}
	}
	var out []*Item
	for _, it := range base.Items {
		if it.Encoder == nil {
			continue
		}
		if c, ok := kids[it.Encoder.Name]; ok {
			if len(c.Encoder.Params) == 0 {
				c = amend(it, c)
			}
			out = append(out, c)
			delete(kids, it.Encoder.Name)
			continue
		}
		out = append(out, it)
	}
	for _, it := range child.Items {
		if it.Encoder != nil && kids[it.Encoder.Name] != nil {
			out = append(out, it)
		}
	}
	return out
}

// amend is the inherited encoder base with an amendment (an encoder of
// its name written without inputs) applied: base's header, its items
// merged with the amendment's as a child family's are with its parent's.
//
// The inherited gguf section keeps its claim (its file type and
// condition) unless the amendment writes a section of its own.
func amend(base, child *Item) *Item {
	b, c := base.Encoder, child.Encoder
	bf, cf := &File{Pos: b.Pos, Name: b.Name, Items: b.Items}, &File{Pos: c.Pos, Name: b.Name, Items: c.Items}
	merged := merge(bf, cf)
	if g := ggufSection(bf); g != nil && ggufSection(cf) == nil {
		for _, it := range merged.Items {
			if it.GGUF != nil {
				it.GGUF = g
			}
		}
	}
	e := *b
	e.Items = merged.Items
	return &Item{Pos: base.Pos, EndPos: base.EndPos, Encoder: &e}
}

// EncoderOver is the name of an Encoders file's variable size
// (`encoder image[patches](...)`: its inputs' dimension that the module
// fixes per bucket), "" for an encoder of fixed shapes.
func EncoderOver(f *File) string {
	if f.encoder == nil {
		return ""
	}
	return f.encoder.Over
}
