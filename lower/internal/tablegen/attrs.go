package tablegen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"
)

// Typed attributes. Every scalar and optional parameter of a primitive
// names its type after its kind ("top_k: scalar int", "softmax: optional
// enum(before|after)"); the generator writes one Go struct per primitive
// (<Name>Attrs, or the shared struct an entry names), a decoder that
// fills it from the node's evaluated arguments once, when the IR builder
// runs the shape rule, and row wrappers that hand the struct to the shape
// rule (func(*ir.Node, *<Name>Attrs) error) and to the lowering
// (func(*fn, *ir.Node, *<Name>Attrs) codegen.Value).
//
// The types, their Go field types and the registry.go decoder each uses:
//
//	int          int64             decodeInt: an int
//	float        float64           decodeFloat: a number (an int converts)
//	bool         bool              decodeBool
//	string       string            decodeString: any string
//	name         string            decodeName: a non-empty string (a tensor or activation name)
//	enum(a|b)    <Struct><Field>   decodeEnum: one of the listed strings; a named string type with one constant per value
//	ints         []int64           decodeInts: a list of ints
//	dict         map[string]any    decodeDict: a dict
//	length       int64             decodeLength: a non-negative number, floored (Python's int())
//	flag_or_name FlagOrName        decodeFlagOrName: a bool, or a non-empty string
//
// An optional parameter whose attrs default is a literal of its type
// ("false", "1.0", "\"before\"") starts at that value; one whose default
// is none or a rule in words ("head_dim ** -0.5") is a pointer (int,
// float, length: nil when absent) or the type's zero value (the others).

// Derived is a field the shape rule fills after decoding (a plan the
// lowering reads, computed once), documented in primitives.json.
type Derived struct {
	Name string `json:"name"` // Go field name
	Type string `json:"type"` // Go type, declared in package lower
	Doc  string `json:"doc"`  // what it holds
}

var (
	enumType = regexp.MustCompile(`^enum\(([a-z0-9_]+(?:\|[a-z0-9_]+)*)\)$`)
	// attrTypes maps an attribute type to its Go type and decoder.
	attrTypes = map[string]struct{ goType, decoder string }{
		"int":          {"int64", "decodeInt"},
		"float":        {"float64", "decodeFloat"},
		"bool":         {"bool", "decodeBool"},
		"string":       {"string", "decodeString"},
		"name":         {"string", "decodeName"},
		"ints":         {"[]int64", "decodeInts"},
		"floats":       {"[]float64", "decodeFloats"},
		"dict":         {"map[string]any", "decodeDict"},
		"length":       {"int64", "decodeLength"},
		"flag_or_name": {"FlagOrName", "decodeFlagOrName"},
	}
	// pointerTypes are the types an absent optional parameter without a
	// literal default leaves nil.
	pointerTypes = map[string]bool{"int": true, "float": true, "length": true}
)

// field is one decoded attribute of a primitive's struct.
type field struct {
	param, goName, typ string // .arch name, Go field name, attribute type
	enum               []string
	optional, pointer  bool
	def                jen.Code // literal default, or nil
	defEnum            string   // an enum's default value, or ""
	doc                string
}

// typedPrim is a primitive's struct, as the generator writes it.
type typedPrim struct {
	structName string
	fields     []field
	derived    []Derived
}

// camel turns snake_case into CamelCase: top_k → TopK, rms_norm_1p → RmsNorm1p.
func camel(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

// typedFields reads the typed parameters of p (params with a type), or nil
// when it has none.
func typedFields(p Primitive) (*typedPrim, error) {
	docs := map[string]Attr{}
	for _, a := range p.Attrs {
		docs[a.Name] = a
	}
	t := &typedPrim{structName: p.Struct, derived: p.Derived}
	if t.structName == "" {
		t.structName = camel(p.Name) + "Attrs"
	}
	for _, s := range p.Params {
		m := param.FindStringSubmatch(s)
		name, kind, typ := m[1], m[2], m[3]
		needsType := kind == "scalar" || kind == "optional"
		switch {
		case needsType && typ == "":
			return nil, fmt.Errorf("%s: parameter %q needs a type (%s: %s TYPE)", p.Name, name, name, kind)
		case !needsType && typ != "":
			return nil, fmt.Errorf("%s: parameter %q of kind %s takes no type", p.Name, name, kind)
		case !needsType:
			continue
		}
		f := field{param: name, goName: camel(name), typ: typ, optional: kind == "optional", doc: docs[name].Doc}
		if em := enumType.FindStringSubmatch(typ); em != nil {
			f.enum = strings.Split(em[1], "|")
		} else if _, ok := attrTypes[typ]; !ok {
			return nil, fmt.Errorf("%s: parameter %q: unknown type %q (int, float, bool, string, name, enum(a|b), ints, dict, length, flag_or_name)", p.Name, name, typ)
		}
		if f.optional {
			def, enumDef, err := literal(f, docs[name].Default)
			if err != nil {
				return nil, fmt.Errorf("%s: parameter %q: %v", p.Name, name, err)
			}
			f.def, f.defEnum = def, enumDef
			f.pointer = def == nil && pointerTypes[typ]
		}
		t.fields = append(t.fields, f)
	}
	for _, d := range p.Derived {
		if !ident.MatchString(d.Name) || d.Type == "" || d.Doc == "" {
			return nil, fmt.Errorf("%s: derived field %+v needs a Go name, a type and a doc", p.Name, d)
		}
	}
	if len(t.fields) == 0 && len(t.derived) == 0 {
		return nil, nil
	}
	return t, nil
}

// literal returns the Go literal of an optional parameter's documented
// default when it is a literal of its type, else nil (none, or a rule);
// for an enum, the default value instead.
func literal(f field, def string) (jen.Code, string, error) {
	switch {
	case def == "none":
		return nil, "", nil
	case f.typ == "bool" && def == "true":
		return jen.True(), "", nil
	case f.typ == "float":
		if v, err := strconv.ParseFloat(def, 64); err == nil {
			return jen.Lit(v), "", nil
		}
	case f.typ == "int" || f.typ == "length":
		if v, err := strconv.ParseInt(def, 10, 64); err == nil {
			return jen.Lit(v), "", nil
		}
	case f.enum != nil || f.typ == "string" || f.typ == "name":
		var s string
		if json.Unmarshal([]byte(def), &s) != nil {
			return nil, "", nil
		}
		if f.enum == nil {
			return jen.Lit(s), "", nil
		}
		for _, v := range f.enum {
			if v == s {
				return nil, s, nil
			}
		}
		return nil, "", fmt.Errorf("default %s is not one of %v", def, f.enum)
	}
	return nil, "", nil
}

func (t *typedPrim) enumTypeName(f field) string {
	return strings.TrimSuffix(t.structName, "Attrs") + f.goName
}

// goType is a field's Go type.
func (t *typedPrim) goType(f field) jen.Code {
	if f.enum != nil {
		return jen.Id(t.enumTypeName(f))
	}
	typ := jen.Id(attrTypes[f.typ].goType)
	if f.pointer {
		return jen.Op("*").Add(typ)
	}
	return typ
}

// declare writes the struct, its enum types and its decoder.
func (t *typedPrim) declare(f *jen.File, users []string) {
	var fields []jen.Code
	for _, x := range t.fields {
		c := "." + x.param
		if x.doc != "" {
			c += ": " + x.doc
		}
		fields = append(fields, jen.Id(x.goName).Add(t.goType(x)).Comment(strings.TrimPrefix(c, ".")))
	}
	for _, d := range t.derived {
		fields = append(fields, jen.Id(d.Name).Id(d.Type).Comment("derived by the shape rule: "+d.Doc))
	}
	f.Commentf("%s are the attributes of %s, decoded and checked once by %s when the IR builder runs the shape rule.", t.structName, strings.Join(users, " and "), "decode"+t.structName)
	f.Type().Id(t.structName).Struct(fields...)
	f.Line()
	for _, x := range t.fields {
		if x.enum == nil {
			continue
		}
		name := t.enumTypeName(x)
		f.Commentf("%s is the %s attribute's choice (%s).", name, x.param, strings.Join(x.enum, ", "))
		f.Type().Id(name).String()
		f.Line()
		var consts []jen.Code
		for _, v := range x.enum {
			consts = append(consts, jen.Id(name+camel(v)).Id(name).Op("=").Lit(v).Comment(fmt.Sprintf("%s: %q", x.param, v)))
		}
		f.Comment("The " + x.param + " choices.")
		f.Const().Defs(consts...)
		f.Line()
	}
	// decoder
	var body []jen.Code
	init := jen.Dict{}
	for _, x := range t.fields {
		switch {
		case x.defEnum != "":
			init[jen.Id(x.goName)] = jen.Id(t.enumTypeName(x) + camel(x.defEnum))
		case x.def != nil:
			init[jen.Id(x.goName)] = x.def
		}
	}
	body = append(body, jen.Id("a").Op(":=").Op("&").Id(t.structName).Values(init))
	if len(t.fields) > 0 {
		body = append(body, jen.Var().Id("err").Error())
	}
	for _, x := range t.fields {
		v := jen.Id("n").Dot("Attrs").Index(jen.Lit(x.param))
		var dec *jen.Statement
		var enumVals []jen.Code
		for _, e := range x.enum {
			enumVals = append(enumVals, jen.Id(t.enumTypeName(x)+camel(e)))
		}
		if x.enum != nil {
			dec = jen.Id("decodeEnum").Call(append([]jen.Code{jen.Lit(x.param), jen.Id("v")}, enumVals...)...)
		} else {
			dec = jen.Id(attrTypes[x.typ].decoder).Call(jen.Lit(x.param), jen.Id("v"))
		}
		switch {
		case !x.optional:
			dec = jen.Id(attrTypes[x.typ].decoder).Call(jen.Lit(x.param), v)
			if x.enum != nil {
				dec = jen.Id("decodeEnum").Call(append([]jen.Code{jen.Lit(x.param), v}, enumVals...)...)
			}
			body = append(body, jen.If(jen.List(jen.Id("a").Dot(x.goName), jen.Err()).Op("=").Add(dec), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())))
		case x.pointer:
			body = append(body, jen.If(jen.Id("v").Op(":=").Add(v), jen.Id("v").Op("!=").Nil()).Block(
				jen.Var().Id("x").Id(attrTypes[x.typ].goType),
				jen.If(jen.List(jen.Id("x"), jen.Err()).Op("=").Add(dec), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
				jen.Id("a").Dot(x.goName).Op("=").Op("&").Id("x"),
			))
		default:
			body = append(body, jen.If(jen.Id("v").Op(":=").Add(v), jen.Id("v").Op("!=").Nil()).Block(
				jen.If(jen.List(jen.Id("a").Dot(x.goName), jen.Err()).Op("=").Add(dec), jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			))
		}
	}
	body = append(body, jen.Return(jen.Id("a"), jen.Nil()))
	f.Commentf("decode%s reads n.Attrs (the evaluated arguments) into %s; an error names the attribute and what it must be.", t.structName, t.structName)
	f.Func().Id("decode"+t.structName).Params(jen.Id("n").Op("*").Qual(irPkg, "Node")).Params(jen.Op("*").Id(t.structName), jen.Error()).Block(body...)
	f.Line()
}

const (
	irPkg      = "github.com/archc/archc/dsl/ir"
	codegenPkg = "github.com/archc/archc/codegen"
)

// wrappers returns the names of a typed primitive's row functions and
// writes them to f: <infer>Typed<Prim> decodes the struct, keeps it on
// the node (ir.Node.Decoded) and runs the shape rule with it;
// <lower>Typed<Prim> hands it to the lowering.
func (t *typedPrim) wrappers(decls *[]jen.Code, p Primitive) (infer, lower *jen.Statement) {
	node := jen.Id("n").Op("*").Qual(irPkg, "Node")
	in, lo := "decoded"+camel(p.Name), "lowerDecoded"+camel(p.Name)
	*decls = append(*decls, jen.Commentf("%s is %s's shape rule: it decodes the attributes once (decode%s), keeps them on the node and runs %s.", in, p.Name, t.structName, p.Infer), jen.Func().Id(in).Params(node).Error().Block(
		jen.List(jen.Id("a"), jen.Err()).Op(":=").Id("decode"+t.structName).Call(jen.Id("n")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Id("n").Dot("Decoded").Op("=").Id("a"),
		jen.Return(jen.Id(p.Infer).Call(jen.Id("n"), jen.Id("a"))),
	), jen.Commentf("%s is %s's lowering: %s with the attributes the shape rule decoded.", lo, p.Name, p.Lower), jen.Func().Id(lo).Params(jen.Id("f").Op("*").Id("fn"), node).Qual(codegenPkg, "Value").Block(
		jen.List(jen.Id("a"), jen.Id("ok")).Op(":=").Id("n").Dot("Decoded").Assert(jen.Op("*").Id(t.structName)),
		jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.Id("f").Dot("undecoded").Call(jen.Id("n")))),
		jen.Return(jen.Id(p.Lower).Call(jen.Id("f"), jen.Id("n"), jen.Id("a"))),
	))
	return jen.Id(in), jen.Id(lo)
}
