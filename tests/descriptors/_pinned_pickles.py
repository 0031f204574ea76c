"""Pickles and structures of the built-in descriptors and the formats
pack, as the release before N-D blocks wrote them.

Made once, by that release (``pickle.dumps(d, protocol)`` and
``d.structure()`` of every descriptor registered after ``import
stride_weave.formats``), and never regenerated: a later release must
write the same bytes and load them as the same descriptors.
"""

#: name -> the full pickle, protocol 0 (the version-1 (name, structure)).
PROTOCOL_0 = {
    'Any': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VAny\np1\n(VDTypeCatego'
        b'ry\np2\n(Vsupertype\np3\nVnone\np4\ntp5\n(Vextension\np6\n(ttp7\ntp8\nt'
        b'p9\nRp10\n.'
    ),
    'Floating': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VFloating\np1\n(VDTypeC'
        b'ategory\np2\n(Vsupertype\np3\n(Vref\np4\nVstr:Any\np5\n(g2\n(g3\nVnone'
        b'\np6\ntp7\n(Vextension\np8\n(ttp9\ntp10\ntp11\ntp12\ng9\ntp13\ntp14\nRp1'
        b'5\n.'
    ),
    'Integer': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VInteger\np1\n(VDTypeCa'
        b'tegory\np2\n(Vsupertype\np3\n(Vref\np4\nVstr:Any\np5\n(g2\n(g3\nVnone\n'
        b'p6\ntp7\n(Vextension\np8\n(ttp9\ntp10\ntp11\ntp12\ng9\ntp13\ntp14\nRp15'
        b'\n.'
    ),
    'Bool': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VBool\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:An'
        b'y\np8\n(VDTypeCategory\np9\n(g6\nVnone\np10\ntp11\n(Vextension\np12\n('
        b'ttp13\ntp14\ntp15\ntp16\ng13\ntp17\ntp18\nRp19\n.'
    ),
    'Int32': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VInt32\np1\n(VSimpleDTy'
        b'pe\np2\n(Vbits\np3\nVint:32\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:'
        b'Integer\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nV'
        b'none\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18'
        b'\ntp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'Int8': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VInt8\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:In'
        b'teger\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVno'
        b'ne\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\nt'
        b'p19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'Float32': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VFloat32\np1\n(VSimpleD'
        b'Type\np2\n(Vbits\np3\nVint:32\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVst'
        b'r:Floating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g'
        b'6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\nt'
        b'p18\ntp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'Float64': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VFloat64\np1\n(VSimpleD'
        b'Type\np2\n(Vbits\np3\nVint:64\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVst'
        b'r:Floating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g'
        b'6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\nt'
        b'p18\ntp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'E8M0': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE8M0\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:Fl'
        b'oating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'E5M2': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE5M2\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:Fl'
        b'oating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'E4M3': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE4M3\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:Fl'
        b'oating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'E3M2': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE3M2\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:6\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:Fl'
        b'oating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'E2M3': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE2M3\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:6\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:Fl'
        b'oating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'E2M1': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE2M1\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:4\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:Fl'
        b'oating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\ntp22\nRp23\n.'
    ),
    'MXFP8_E4M3': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VMXFP8_E4M3\np1\n(VBloc'
        b'kScaledDType\np2\n(Velement\np3\n(Vref\np4\nVstr:E4M3\np5\n(VSimpleD'
        b'Type\np6\n(Vbits\np7\nVint:8\np8\ntp9\n(Vsupertype\np10\n(g4\nVstr:Flo'
        b'ating\np11\n(VDTypeCategory\np12\n(g10\n(g4\nVstr:Any\np13\n(g12\n(g1'
        b'0\nVnone\np14\ntp15\n(Vextension\np16\n(ttp17\ntp18\ntp19\ntp20\ng17\nt'
        b'p21\ntp22\ntp23\ng17\ntp24\ntp25\ntp26\n(Vlevels\np27\n((VLevel\np28\n('
        b'Vscale\np29\n(g4\nVstr:E8M0\np30\ng24\ntp31\ntp32\n(Vblock\np33\nVint:'
        b'32\np34\ntp35\ntp36\ntp37\ntp38\n(Vrepresentation_rules\np39\n((VRep'
        b'resentationRule\np40\nVstr:stride_weave._dtypes.LevelExtent\np4'
        b'1\n(g16\n(Vint:0\np42\nVint:32\np43\ntp44\ntp45\ntp46\ntp47\ntp48\ng17\n'
        b'tp49\ntp50\nRp51\n.'
    ),
    'MXFP8_E5M2': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VMXFP8_E5M2\np1\n(VBloc'
        b'kScaledDType\np2\n(Velement\np3\n(Vref\np4\nVstr:E5M2\np5\n(VSimpleD'
        b'Type\np6\n(Vbits\np7\nVint:8\np8\ntp9\n(Vsupertype\np10\n(g4\nVstr:Flo'
        b'ating\np11\n(VDTypeCategory\np12\n(g10\n(g4\nVstr:Any\np13\n(g12\n(g1'
        b'0\nVnone\np14\ntp15\n(Vextension\np16\n(ttp17\ntp18\ntp19\ntp20\ng17\nt'
        b'p21\ntp22\ntp23\ng17\ntp24\ntp25\ntp26\n(Vlevels\np27\n((VLevel\np28\n('
        b'Vscale\np29\n(g4\nVstr:E8M0\np30\ng24\ntp31\ntp32\n(Vblock\np33\nVint:'
        b'32\np34\ntp35\ntp36\ntp37\ntp38\n(Vrepresentation_rules\np39\n((VRep'
        b'resentationRule\np40\nVstr:stride_weave._dtypes.LevelExtent\np4'
        b'1\n(g16\n(Vint:0\np42\nVint:32\np43\ntp44\ntp45\ntp46\ntp47\ntp48\ng17\n'
        b'tp49\ntp50\nRp51\n.'
    ),
    'MXFP6_E3M2': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VMXFP6_E3M2\np1\n(VBloc'
        b'kScaledDType\np2\n(Velement\np3\n(Vref\np4\nVstr:E3M2\np5\n(VSimpleD'
        b'Type\np6\n(Vbits\np7\nVint:6\np8\ntp9\n(Vsupertype\np10\n(g4\nVstr:Flo'
        b'ating\np11\n(VDTypeCategory\np12\n(g10\n(g4\nVstr:Any\np13\n(g12\n(g1'
        b'0\nVnone\np14\ntp15\n(Vextension\np16\n(ttp17\ntp18\ntp19\ntp20\ng17\nt'
        b'p21\ntp22\ntp23\ng17\ntp24\ntp25\ntp26\n(Vlevels\np27\n((VLevel\np28\n('
        b'Vscale\np29\n(g4\nVstr:E8M0\np30\n(g6\n(g7\nVint:8\np31\ntp32\n(g10\ng2'
        b'2\ntp33\ng17\ntp34\ntp35\ntp36\n(Vblock\np37\nVint:32\np38\ntp39\ntp40\n'
        b'tp41\ntp42\n(Vrepresentation_rules\np43\n((VRepresentationRule\np'
        b'44\nVstr:stride_weave._dtypes.LevelExtent\np45\n(g16\n(Vint:0\np4'
        b'6\nVint:32\np47\ntp48\ntp49\ntp50\ntp51\ntp52\ng17\ntp53\ntp54\nRp55\n.'
    ),
    'MXFP6_E2M3': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VMXFP6_E2M3\np1\n(VBloc'
        b'kScaledDType\np2\n(Velement\np3\n(Vref\np4\nVstr:E2M3\np5\n(VSimpleD'
        b'Type\np6\n(Vbits\np7\nVint:6\np8\ntp9\n(Vsupertype\np10\n(g4\nVstr:Flo'
        b'ating\np11\n(VDTypeCategory\np12\n(g10\n(g4\nVstr:Any\np13\n(g12\n(g1'
        b'0\nVnone\np14\ntp15\n(Vextension\np16\n(ttp17\ntp18\ntp19\ntp20\ng17\nt'
        b'p21\ntp22\ntp23\ng17\ntp24\ntp25\ntp26\n(Vlevels\np27\n((VLevel\np28\n('
        b'Vscale\np29\n(g4\nVstr:E8M0\np30\n(g6\n(g7\nVint:8\np31\ntp32\n(g10\ng2'
        b'2\ntp33\ng17\ntp34\ntp35\ntp36\n(Vblock\np37\nVint:32\np38\ntp39\ntp40\n'
        b'tp41\ntp42\n(Vrepresentation_rules\np43\n((VRepresentationRule\np'
        b'44\nVstr:stride_weave._dtypes.LevelExtent\np45\n(g16\n(Vint:0\np4'
        b'6\nVint:32\np47\ntp48\ntp49\ntp50\ntp51\ntp52\ng17\ntp53\ntp54\nRp55\n.'
    ),
    'MXFP4': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VMXFP4\np1\n(VBlockScal'
        b'edDType\np2\n(Velement\np3\n(Vref\np4\nVstr:E2M1\np5\n(VSimpleDType\n'
        b'p6\n(Vbits\np7\nVint:4\np8\ntp9\n(Vsupertype\np10\n(g4\nVstr:Floating'
        b'\np11\n(VDTypeCategory\np12\n(g10\n(g4\nVstr:Any\np13\n(g12\n(g10\nVno'
        b'ne\np14\ntp15\n(Vextension\np16\n(ttp17\ntp18\ntp19\ntp20\ng17\ntp21\nt'
        b'p22\ntp23\ng17\ntp24\ntp25\ntp26\n(Vlevels\np27\n((VLevel\np28\n(Vscal'
        b'e\np29\n(g4\nVstr:E8M0\np30\n(g6\n(g7\nVint:8\np31\ntp32\n(g10\ng22\ntp3'
        b'3\ng17\ntp34\ntp35\ntp36\n(Vblock\np37\nVint:32\np38\ntp39\ntp40\ntp41\n'
        b'tp42\n(Vrepresentation_rules\np43\n((VRepresentationRule\np44\nVs'
        b'tr:stride_weave._dtypes.LevelExtent\np45\n(g16\n(Vint:0\np46\nVin'
        b't:32\np47\ntp48\ntp49\ntp50\ntp51\ntp52\ng17\ntp53\ntp54\nRp55\n.'
    ),
    'MXINT8': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VMXINT8\np1\n(VBlockSca'
        b'ledDType\np2\n(Velement\np3\n(Vref\np4\nVstr:Int8\np5\n(VSimpleDType'
        b'\np6\n(Vbits\np7\nVint:8\np8\ntp9\n(Vsupertype\np10\n(g4\nVstr:Integer'
        b'\np11\n(VDTypeCategory\np12\n(g10\n(g4\nVstr:Any\np13\n(g12\n(g10\nVno'
        b'ne\np14\ntp15\n(Vextension\np16\n(ttp17\ntp18\ntp19\ntp20\ng17\ntp21\nt'
        b'p22\ntp23\ng17\ntp24\ntp25\ntp26\n(Vlevels\np27\n((VLevel\np28\n(Vscal'
        b'e\np29\n(g4\nVstr:E8M0\np30\n(g6\n(g7\nVint:8\np31\ntp32\n(g10\n(g4\nVst'
        b'r:Floating\np33\ng21\ntp34\ntp35\ng17\ntp36\ntp37\ntp38\n(Vblock\np39\n'
        b'Vint:32\np40\ntp41\ntp42\ntp43\ntp44\n(Vrepresentation_rules\np45\n('
        b'(VRepresentationRule\np46\nVstr:stride_weave._dtypes.LevelExte'
        b'nt\np47\n(g16\n(Vint:0\np48\nVint:32\np49\ntp50\ntp51\ntp52\ntp53\ntp54'
        b'\ng17\ntp55\ntp56\nRp57\n.'
    ),
    'NVFP4': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VNVFP4\np1\n(VBlockScal'
        b'edDType\np2\n(Velement\np3\n(Vref\np4\nVstr:E2M1\np5\n(VSimpleDType\n'
        b'p6\n(Vbits\np7\nVint:4\np8\ntp9\n(Vsupertype\np10\n(g4\nVstr:Floating'
        b'\np11\n(VDTypeCategory\np12\n(g10\n(g4\nVstr:Any\np13\n(g12\n(g10\nVno'
        b'ne\np14\ntp15\n(Vextension\np16\n(ttp17\ntp18\ntp19\ntp20\ng17\ntp21\nt'
        b'p22\ntp23\ng17\ntp24\ntp25\ntp26\n(Vlevels\np27\n((VLevel\np28\n(Vscal'
        b'e\np29\n(g4\nVstr:E4M3\np30\n(g6\n(g7\nVint:8\np31\ntp32\n(g10\ng22\ntp3'
        b'3\ng17\ntp34\ntp35\ntp36\n(Vblock\np37\nVint:16\np38\ntp39\ntp40\n(g28\n'
        b'(g29\n(g4\nVstr:Float32\np41\n(g6\n(g7\nVint:32\np42\ntp43\n(g10\ng22\n'
        b'tp44\ng17\ntp45\ntp46\ntp47\n(g37\nVwhole\np48\ntp49\ntp50\ntp51\ntp52\n'
        b'(Vrepresentation_rules\np53\n((VRepresentationRule\np54\nVstr:st'
        b'ride_weave._dtypes.LevelExtent\np55\n(g16\n(Vint:0\np56\nVint:16\n'
        b'p57\ntp58\ntp59\ntp60\n(g54\nVstr:stride_weave._dtypes.LevelExten'
        b't\np61\n(g16\n(Vint:1\np62\ng48\ntp63\ntp64\ntp65\ntp66\ntp67\ng17\ntp68'
        b'\ntp69\nRp70\n.'
    ),
    'Complex': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VComplex\np1\n(VDTypeCa'
        b'tegory\np2\n(Vsupertype\np3\n(Vref\np4\nVstr:Any\np5\n(g2\n(g3\nVnone\n'
        b'p6\ntp7\n(Vextension\np8\n(ttp9\ntp10\ntp11\ntp12\ng9\ntp13\nVstride_w'
        b'eave.formats\np14\ntp15\nRp16\n.'
    ),
    'Float16': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VFloat16\np1\n(VSimpleD'
        b'Type\np2\n(Vbits\np3\nVint:16\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVst'
        b'r:Floating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g'
        b'6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\nt'
        b'p18\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'BFloat16': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VBFloat16\np1\n(VSimple'
        b'DType\np2\n(Vbits\np3\nVint:16\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVs'
        b'tr:Floating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n('
        b'g6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\n'
        b'tp18\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n'
        b'.'
    ),
    'E4M3FNUZ': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE4M3FNUZ\np1\n(VSimple'
        b'DType\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVst'
        b'r:Floating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g'
        b'6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\nt'
        b'p18\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'E5M2FNUZ': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VE5M2FNUZ\np1\n(VSimple'
        b'DType\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVst'
        b'r:Floating\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g'
        b'6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\nt'
        b'p18\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'Int16': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VInt16\np1\n(VSimpleDTy'
        b'pe\np2\n(Vbits\np3\nVint:16\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:'
        b'Integer\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nV'
        b'none\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18'
        b'\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'Int64': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VInt64\np1\n(VSimpleDTy'
        b'pe\np2\n(Vbits\np3\nVint:64\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:'
        b'Integer\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nV'
        b'none\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18'
        b'\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'Int4': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VInt4\np1\n(VSimpleDTyp'
        b'e\np2\n(Vbits\np3\nVint:4\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:In'
        b'teger\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVno'
        b'ne\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\nt'
        b'p19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'UInt8': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VUInt8\np1\n(VSimpleDTy'
        b'pe\np2\n(Vbits\np3\nVint:8\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:I'
        b'nteger\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'UInt16': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VUInt16\np1\n(VSimpleDT'
        b'ype\np2\n(Vbits\np3\nVint:16\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr'
        b':Integer\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\n'
        b'Vnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp1'
        b'8\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'UInt32': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VUInt32\np1\n(VSimpleDT'
        b'ype\np2\n(Vbits\np3\nVint:32\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr'
        b':Integer\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\n'
        b'Vnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp1'
        b'8\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'UInt64': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VUInt64\np1\n(VSimpleDT'
        b'ype\np2\n(Vbits\np3\nVint:64\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr'
        b':Integer\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\n'
        b'Vnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp1'
        b'8\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'UInt4': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VUInt4\np1\n(VSimpleDTy'
        b'pe\np2\n(Vbits\np3\nVint:4\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nVstr:I'
        b'nteger\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n(g6\nVn'
        b'one\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\ntp18\n'
        b'tp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n.'
    ),
    'Complex64': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VComplex64\np1\n(VSimpl'
        b'eDType\np2\n(Vbits\np3\nVint:64\np4\ntp5\n(Vsupertype\np6\n(Vref\np7\nV'
        b'str:Complex\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9\n('
        b'g6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng14\n'
        b'tp18\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp24\n'
        b'.'
    ),
    'Complex128': (
        b'cstride_weave._dtypes\n_reconstruct\np0\n(VComplex128\np1\n(VSimp'
        b'leDType\np2\n(Vbits\np3\nVint:128\np4\ntp5\n(Vsupertype\np6\n(Vref\np7'
        b'\nVstr:Complex\np8\n(VDTypeCategory\np9\n(g6\n(g7\nVstr:Any\np10\n(g9'
        b'\n(g6\nVnone\np11\ntp12\n(Vextension\np13\n(ttp14\ntp15\ntp16\ntp17\ng1'
        b'4\ntp18\ntp19\ntp20\ng14\ntp21\nVstride_weave.formats\np22\ntp23\nRp2'
        b'4\n.'
    ),
}

#: name -> the full pickle, protocol 2 (the version-2 record).
PROTOCOL_2 = {
    'Any': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x03\x00\x00\x00Anyq\x01K\x01N)tq\x02\x85q\x03'
        b'Rq\x04.'
    ),
    'Floating': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x08\x00\x00\x00Floatingq\x01K\x01X\x03\x00'
        b'\x00\x00Anyq\x02K\x01N))tq\x03\x85q\x04Rq\x05.'
    ),
    'Integer': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x07\x00\x00\x00Integerq\x01K\x01X\x03\x00\x00'
        b'\x00Anyq\x02K\x01N))tq\x03\x85q\x04Rq\x05.'
    ),
    'Bool': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00Boolq\x01K\x02K\x08X\x03\x00\x00\x00'
        b'Anyq\x02K\x01N))tq\x03\x85q\x04Rq\x05.'
    ),
    'Int32': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x05\x00\x00\x00Int32q\x01K\x02K X\x07\x00\x00'
        b'\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'Int8': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00Int8q\x01K\x02K\x08X\x07\x00\x00\x00'
        b'Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'Float32': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x07\x00\x00\x00Float32q\x01K\x02K X\x08'
        b'\x00\x00\x00Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'Float64': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x07\x00\x00\x00Float64q\x01K\x02K@X\x08'
        b'\x00\x00\x00Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'E8M0': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00E8M0q\x01K\x02K\x08X\x08\x00\x00\x00'
        b'Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'E5M2': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00E5M2q\x01K\x02K\x08X\x08\x00\x00\x00'
        b'Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'E4M3': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00E4M3q\x01K\x02K\x08X\x08\x00\x00\x00'
        b'Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'E3M2': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00E3M2q\x01K\x02K\x06X\x08\x00\x00\x00'
        b'Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'E2M3': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00E2M3q\x01K\x02K\x06X\x08\x00\x00\x00'
        b'Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'E2M1': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00E2M1q\x01K\x02K\x04X\x08\x00\x00\x00'
        b'Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04\x85q\x05Rq\x06.'
    ),
    'MXFP8_E4M3': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\n\x00\x00\x00MXFP8_E4M3q\x01K\x04X'
        b'\x04\x00\x00\x00E4M3q\x02K\x02K\x08X\x08\x00\x00\x00Floatingq\x03K\x01X\x03\x00\x00\x00Anyq\x04K\x01N)))K\x01X\x04\x00\x00\x00E8M0q\x05'
        b'K\x02K\x08h\x03K\x01h\x04K\x01N)))K )tq\x06\x85q\x07Rq\x08.'
    ),
    'MXFP8_E5M2': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\n\x00\x00\x00MXFP8_E5M2q\x01K\x04X'
        b'\x04\x00\x00\x00E5M2q\x02K\x02K\x08X\x08\x00\x00\x00Floatingq\x03K\x01X\x03\x00\x00\x00Anyq\x04K\x01N)))K\x01X\x04\x00\x00\x00E8M0q\x05'
        b'K\x02K\x08h\x03K\x01h\x04K\x01N)))K )tq\x06\x85q\x07Rq\x08.'
    ),
    'MXFP6_E3M2': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\n\x00\x00\x00MXFP6_E3M2q\x01K\x04X'
        b'\x04\x00\x00\x00E3M2q\x02K\x02K\x06X\x08\x00\x00\x00Floatingq\x03K\x01X\x03\x00\x00\x00Anyq\x04K\x01N)))K\x01X\x04\x00\x00\x00E8M0q\x05'
        b'K\x02K\x08h\x03K\x01h\x04K\x01N)))K )tq\x06\x85q\x07Rq\x08.'
    ),
    'MXFP6_E2M3': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\n\x00\x00\x00MXFP6_E2M3q\x01K\x04X'
        b'\x04\x00\x00\x00E2M3q\x02K\x02K\x06X\x08\x00\x00\x00Floatingq\x03K\x01X\x03\x00\x00\x00Anyq\x04K\x01N)))K\x01X\x04\x00\x00\x00E8M0q\x05'
        b'K\x02K\x08h\x03K\x01h\x04K\x01N)))K )tq\x06\x85q\x07Rq\x08.'
    ),
    'MXFP4': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x05\x00\x00\x00MXFP4q\x01K\x04X\x04\x00\x00\x00E'
        b'2M1q\x02K\x02K\x04X\x08\x00\x00\x00Floatingq\x03K\x01X\x03\x00\x00\x00Anyq\x04K\x01N)))K\x01X\x04\x00\x00\x00E8M0q\x05K\x02K\x08h'
        b'\x03K\x01h\x04K\x01N)))K )tq\x06\x85q\x07Rq\x08.'
    ),
    'MXINT8': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x06\x00\x00\x00MXINT8q\x01K\x04X\x04\x00\x00\x00'
        b'Int8q\x02K\x02K\x08X\x07\x00\x00\x00Integerq\x03K\x01X\x03\x00\x00\x00Anyq\x04K\x01N)))K\x01X\x04\x00\x00\x00E8M0q\x05K\x02K\x08X'
        b'\x08\x00\x00\x00Floatingq\x06K\x01h\x04K\x01N)))K )tq\x07\x85q\x08Rq\t.'
    ),
    'NVFP4': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x05\x00\x00\x00NVFP4q\x01K\x04X\x04\x00\x00\x00E'
        b'2M1q\x02K\x02K\x04X\x08\x00\x00\x00Floatingq\x03K\x01X\x03\x00\x00\x00Anyq\x04K\x01N)))K\x02X\x04\x00\x00\x00E4M3q\x05K\x02K\x08h'
        b'\x03K\x01h\x04K\x01N)))K\x10X\x07\x00\x00\x00Float32q\x06K\x02K h\x03K\x01h\x04K\x01N)))N)tq\x07\x85q\x08Rq\t.'
    ),
    'Complex': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x07\x00\x00\x00Complexq\x01K\x01X\x03\x00\x00'
        b'\x00Anyq\x02K\x01N))tq\x03X\x14\x00\x00\x00stride_weave.formatsq\x04\x86q\x05Rq\x06.'
    ),
    'Float16': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x07\x00\x00\x00Float16q\x01K\x02K\x10X\x08'
        b'\x00\x00\x00Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq'
        b'\x05\x86q\x06Rq\x07.'
    ),
    'BFloat16': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x08\x00\x00\x00BFloat16q\x01K\x02K\x10X'
        b'\x08\x00\x00\x00Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formats'
        b'q\x05\x86q\x06Rq\x07.'
    ),
    'E4M3FNUZ': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x08\x00\x00\x00E4M3FNUZq\x01K\x02K\x08X'
        b'\x08\x00\x00\x00Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formats'
        b'q\x05\x86q\x06Rq\x07.'
    ),
    'E5M2FNUZ': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x08\x00\x00\x00E5M2FNUZq\x01K\x02K\x08X'
        b'\x08\x00\x00\x00Floatingq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formats'
        b'q\x05\x86q\x06Rq\x07.'
    ),
    'Int16': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x05\x00\x00\x00Int16q\x01K\x02K\x10X\x07\x00\x00'
        b'\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86q'
        b'\x06Rq\x07.'
    ),
    'Int64': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x05\x00\x00\x00Int64q\x01K\x02K@X\x07\x00\x00'
        b'\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86q'
        b'\x06Rq\x07.'
    ),
    'Int4': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x04\x00\x00\x00Int4q\x01K\x02K\x04X\x07\x00\x00\x00'
        b'Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86q\x06'
        b'Rq\x07.'
    ),
    'UInt8': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x05\x00\x00\x00UInt8q\x01K\x02K\x08X\x07\x00\x00'
        b'\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86q'
        b'\x06Rq\x07.'
    ),
    'UInt16': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x06\x00\x00\x00UInt16q\x01K\x02K\x10X\x07\x00'
        b'\x00\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86'
        b'q\x06Rq\x07.'
    ),
    'UInt32': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x06\x00\x00\x00UInt32q\x01K\x02K X\x07\x00'
        b'\x00\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86'
        b'q\x06Rq\x07.'
    ),
    'UInt64': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x06\x00\x00\x00UInt64q\x01K\x02K@X\x07\x00'
        b'\x00\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86'
        b'q\x06Rq\x07.'
    ),
    'UInt4': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\x05\x00\x00\x00UInt4q\x01K\x02K\x04X\x07\x00\x00'
        b'\x00Integerq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formatsq\x05\x86q'
        b'\x06Rq\x07.'
    ),
    'Complex64': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\t\x00\x00\x00Complex64q\x01K\x02K@'
        b'X\x07\x00\x00\x00Complexq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.formats'
        b'q\x05\x86q\x06Rq\x07.'
    ),
    'Complex128': (
        b'\x80\x02cstride_weave._dtypes\n_reconstruct\nq\x00(X\n\x00\x00\x00Complex128q\x01K\x02K'
        b'\x80X\x07\x00\x00\x00Complexq\x02K\x01X\x03\x00\x00\x00Anyq\x03K\x01N)))tq\x04X\x14\x00\x00\x00stride_weave.format'
        b'sq\x05\x86q\x06Rq\x07.'
    ),
}

#: name -> protocol -> sha256 of pickle.dumps(d, protocol), protocols 0 to 5.
DIGESTS = {
    'Any': (
        'b74e12436341969a8b1c28495e98b3f6ce9edc9bac8b67827d09c1ce9ea4c3d0',
        '46ea941ad84817509cc44b44f3e3a8aef22020aa3f39f491b05e0d3e09bd2d19',
        'c3c6c943651eb4e4e0d7d2e05ad90097cd4f6fcf94fdd0f8ed0a12f6bfb24196',
        '4419a89c708a7ec8a2dc5abf942de91d86e422dc4e4903589a51045e6fb64d9e',
        '99f0af316c2f6958951d34a33fb39ba4d7512d0e988334417735cf93395a0339',
        'ac7e36e657f951b4ab76c11608084542950f9c40de257ab702ff8af68a2f1700',
    ),
    'Floating': (
        '66281bc18d497859784867cc40b229a88f7a05d777c71d062190d5c4457e1ccc',
        'dfcacfd06a1318386662890be40a7cbb0e0462c961ce49facec5da9c0c0ffb56',
        'ea1767fc79dfef92f1b144d778684ab9c00b7e6f1c59a97a75328d022399f836',
        '80ffbb4b0fefe108db4661ed9c9418cb970f5e7f0cd366f7d09a2024a3535367',
        '9bbf81574ed1d97125c7a26eaf9f099e6db8d25077ea40d2c05896c8264a6e1c',
        '91d31111924e67e46a36489dc7002a340294a37df30c727f409f89bd9e416622',
    ),
    'Integer': (
        'afcac533ab63aff88460baf3ec7e698f542c813242a7df0b314b8a8f739184b4',
        'a2d5dc14c8c02bd2d95718b681d74e39420b6b708bca586c51b92e30c4f13f32',
        '55413f4979f820bef38ce8fdfcada30f351c62696ae8fe25e33e5f242802a0ad',
        'a4835f1418220d76406f616c6381a1c52e6f0ccc02cd3df1144d89fb3d44085f',
        '787a1f0b7fb645c253a068989b7b7a0510165eb73455076b51481901a6549bce',
        '7423bcba75a656c79a85dbcf8d3bba140f7a024973ab3b0f5cc09458742a3c9f',
    ),
    'Bool': (
        '24b3702a86f2de3cff810eb6aea7ba1172de353dedd221c48e587be6e848ab62',
        'f72cffd1572e4e2316a74d7ad62fabb829dbc0ee08181f5c99a0ad6d934c0b17',
        'e67dea036acfde6bc1863689ba9aef9ab97bb9511bdc1769267fe433e225f528',
        '4a25df3363ae2ab93c3402a71af12a42684cea43bf232828d235080c7cdef333',
        '47ca1bb1f4cd77067969f55dd71115909c974bc856dbbbf733db08b9de57f6f9',
        '29b390efa1b3d5af337b379d1c538f38bb2cff1c97f5d49e928638ae7f85be33',
    ),
    'Int32': (
        '1c146fc7e93ac6135f387153445295b29a5ce28027a8324ff525631fee8be07f',
        '266cf35897fb170424a99c232d8aff2af08c13ad7f9a3e5080b399de191968b8',
        'f10dfaca0a23a38ff04a0ae7b29b2dc1ba9b5529cfa4587c4a96d1aaa34c135c',
        'f7424d71c8028117e8ea9be4763e6a34ff69cc0811e65432f04de37356aa525d',
        '77061709ec1d4850387f223971d2d66275b8457c57f5addfa6bef86b70ae3224',
        'd13fef3f62e936352ab24d2108bb36efef6068940b0b8bbdbdcb01cef6069a50',
    ),
    'Int8': (
        'bddd85f1ab7e3febd24304938e09a546b0fb5569d630a04a0f6d0b4946d6367a',
        '3ac7990ce41f97cd61273db8ad2f9f58f808ce3123e001cb8193f5b793c820ed',
        '4359abdfe5bc85c3bc6af10f2f42e8a381d9626ac54a4cbd898aacfa417199b1',
        'f2d0b98127fca69119f15b6883992acf856516f14f3d1307c12009977e9143fc',
        'af8ac0804de2c3801b5cefdeec2daf0c5846456ee49b811e541afdc8f684e2df',
        'aaf2f922e87c429c4fbde0c67cf488bd7a1f43c6d05874a90ef62793b2f4b74d',
    ),
    'Float32': (
        '769ec108502c12ad30ad92eeaadc548be6cd33dfa06afbb03c34354d82489d06',
        '2adc372a7fad2c3d5c0fc00eb56390a0f3bbaefb3c071e0aedaacf72aebcadf7',
        'c3baf3002fc47a8eb9ab003b0d01c8b7798ff895ff54be47445edc1b86458fec',
        'd06fc4b1cf8425003d2111a38c454fd42aa87fdea4abbb32a0e3ed2d632c4ac4',
        'b524eb437f9f99418e74cc19a25042851f0f1841b99daf4fa8a6650fbc503ab8',
        '8cfe7756a66eed02632ffcfdbeedfe035d5d1e585c60487d54b23edc5b87918c',
    ),
    'Float64': (
        '88fe62318e4fd777268262de8e0fe6ecf500cc7669bf6ded2def020c4b6cbd67',
        'ae57115b94631bf251334e81b2240fb506107a108bd73c59fbbc1f8821aca590',
        '53ffd9ba94bb83ed04cde72e07e20023d1d854cd7d68a538a96a7809d4e0f2e6',
        '2b9e3b9dc1549940ba2fdbd14d71be5f22e68cffe26b3417740a1b0ea979b697',
        '2ebfbb0796a628194ac61db1397a2b5f108c502f39e5bd6169f7252b07ba59c4',
        'ba564c0c6967115f1e5fecee200f307bb71752ff6d5776439d99c4b4021ab476',
    ),
    'E8M0': (
        '23a27bcdc99064deef2392acf33ae6de8387ac4ad30ac4506e71208f9b065627',
        '278e59c99a153237b22c3d2bfd0080dedcf7624a30d6799b6f10246ac22520c9',
        'c0af821819af65ffd7ed913b986182e0de0a2cf05316ae6b63986cdc800b3faa',
        '0443f330b1f749e0db8fe6b4d027ab81fbde76b6db6f26a7d5f78e8bc27b93bf',
        '5d821ca74e392011efd00173f54a32552707d4a64eedf3e3c6e3721b7f989813',
        'cecacb184b9fc591b65e901f2e16f8a2906b81f1a8fa3c759d79f3137d98a59e',
    ),
    'E5M2': (
        'cdbd58fa8f2e96787ec6e0ebc8a46ce130356fed0c7b43a4bf5528251ef455b2',
        '2f033091d1a8ac7adb2a594ea81b44a72d9c8e7d9d3b1b70a144479f093e310c',
        '55b56b4956d1cac2261e4674803a3a1279015b0b8701effee222a672d319492d',
        '2a729a32c7d26b1c2f91a04cda39f9a040971bad21528ff804a23c9fe96b8cfe',
        '11dc90933f9b7f33703cfc424f65423f939f43ea76b6a453a9557e5ccce3416d',
        'ef8497f08993ddf24cb931b8570c752b7fa867819b6be3d458b5e37c171d2898',
    ),
    'E4M3': (
        '724db86385bee5971c60b289e7414c922f2e779aa42994fe682441c61173fccb',
        '8675960cb493b776e0b6ac38c50a1314a4a2beb6bb67ea85d1925d7eb78a144a',
        '3bcd3f07a9956af06342ce503598e0b9fd1cc5aa8941102849f7bac18921d618',
        'd6094bad89889e4088ce12802c7f8b381f3305a772f8ad2f50057e6dc0238427',
        'f6262fcb105c9b3e15e6ab0725933501ca283e307fb81f7c48fba51491262819',
        '2d32222954befa922ba4b591ff118ffa1c1c257cbd93bfbfdf12318b3dfcd46d',
    ),
    'E3M2': (
        '3624b91d3c852849ac5ac52384389d47b3962caa543097fb016f922bce8c5039',
        'b1988472a632288b4fd62682b1a8097c16457d7c7f9c2bea5b3c68cb3aa21013',
        '0c0891eab3d7038903484c722488898280e3a52a9d1d6c4c100a31fde49e51d2',
        '339a0af749e21167bcf5f4b404311dbe5ca0ca0734be8efe49d28ee17a71f471',
        'f0eca1660a27e207746710c3094e007e0b1ec2d5d472cb96b020433d5ceb34a7',
        '7a04239be16ffcc3331ea7a15e2b7f954509893d3eb708c1e9743cbb75aa3e70',
    ),
    'E2M3': (
        'c0661198b8748ee8e66769edb24c73a5ffdc7069e98ceaeefbfebac20bad382b',
        'fdffa1e70614d12551569be9b2f108992fb47168bd868735f5eef8370b24c9ff',
        '6c44b9804f969c80bcaccd671f317289e7c1d60d85d4f5677b758d28fa4d9f0b',
        '9085c3b0decc9042fc9374d7872a96ddb20db7f9c4959e2e0f9becd85569596c',
        '430d36b6f015d81ab2b54e449f80891561cd9c6012b3d4fc0b6d768390a6f8c0',
        '04fd3da2d5282df3424509bbdd6f45d2e312659855cf7ee7600335e77f32b4e3',
    ),
    'E2M1': (
        'd85a9e184ccc5ae33eec2eeaf045c1f542633c2b7d4a1e69f3a5b695e8c3ec31',
        '61dc8d9ca7e5cb9490a45152e5b04a72c8d649ce917f10a65396ca9c68780d61',
        'dced686503814fdd3f62d9fa04c594f59813e53c2aa9d78d6a42754c52fea5e3',
        '5acee8b4b555e17155b7613ce64310cda48bada0e07b256e1bf3c1dcee35fb0f',
        '71f6a3a7d4936c465a513bd933e96c2b6363b7863839fd0c8f0b316811695fb2',
        'b7a0601316720aa65056f77ed649954bb2a410eae3238a02c3015799b7e1f22d',
    ),
    'MXFP8_E4M3': (
        '938614f62bff8806998f78d6b42022e13b1ae90d60138841cc950b19e94dec23',
        'dac2a4a2e779eb88fd92e9d1d333de89766e60b0d00d5cb6cb4b3d2934a9871d',
        'a4c9333d1daea570a462998812b92402f2de9225e3e8995211c8f41d84bf3902',
        '238f9bba6702a274eff7d9974552b6c9fd668240c75abdd276775213640b2759',
        '96b937100e3a6609c812ef98343cf396368899d41f67916b2ddcf84145c5a769',
        '07870fbde100c4f0eade6d5d6c294c25722ee30b535b79bfe3ed9f3b1ed4a38d',
    ),
    'MXFP8_E5M2': (
        '639763e7ec30c9bcdd096126d85ae112c2a98fec79818a637d30b0e0146a9f0b',
        'bf2c3dd2ab5c5486e39d7e061aaf4fbc2efd929752c71f84040bfe4e20542baf',
        'c0b7ce206fa850e5c959e3df0a5faa4adbecd120308b88b76292959137cb9799',
        '96ce82911b959d3239ea6279f8c57954ffa4afab9a80dcd92bdd7e0f397a82a2',
        'd628e4279254d646f9ffa506a43c2f7be5cbbb4efed66fc19306bdec97e98612',
        'cb0db1ab260ba59fa25d00d6497883e6ae7ab3d16dcad73473a431c75db6fd41',
    ),
    'MXFP6_E3M2': (
        '290aaef4f230590c2b1d82ac263b0ec91bd95004ce5ef15775b30b3b88dee628',
        '32c980a6d4c6303796b3d4defebbf93ffa73abecf5cc85bad4a98133e76b9e93',
        '380a23651f94d08d4fc5781e6a0a2d2ef638aa486cd4026a8e9b9abbf4216f86',
        'b1b817f541592e5126789ebaf819af8400bdd966a3d2062fa7372defd7848df2',
        '7c7268be3c3e0d538545a7f92aff6cde5ac06718126080807ae573056481857a',
        'acc4312305a385b3168c0ceace164dc48f823ef5447b30369dd7ee42d11d38bb',
    ),
    'MXFP6_E2M3': (
        '73a01eb63c63b9f4e74d203533364fa9d5f14b47bc7fd8df363c9c949d3fe3c8',
        '7050b27edd8e56372d851e22792907b697d610ec938869aacb1f880b04ab9eef',
        '74cf1c4ecfe6f20fcfbc8bdd3102a4307466050870752520b73c56413a5d5922',
        'cd02c8e30e50949db0363cc4198ba835c3384a5ec0fc311086453e5016503c4e',
        '78eea91e562cca72b1f2c774fecb2147e75d66c205781630fbf717f24b517146',
        '60759f45f71037ae182bfebb6feacb85835322ad0d196f4deac732d9628344f2',
    ),
    'MXFP4': (
        '22dd9c27ebfd5b6e7d041b41cd707102133290ceb1116a5bffbf14d5cf4de4b5',
        'ee86751a3a933b1f53576657694cce3789b83226582fb1418a19b7ba272f50e7',
        '0b9a876bff4226c173f5c32c2e1d67889b8d1c6aa3c0e4fd331c9307f094336e',
        'a215d7bbb71e91a8be3b13552525beea465ff5f12966fd9d2d7054330cf4e909',
        'ec2eb571734227eb601d1f91b727e24f8ced9e178930223cbe9faad40298f9b4',
        '99c6d890fd6bcd3952b43f95342f88c92354d441a02bbc4ad0f09c15168d9a8c',
    ),
    'MXINT8': (
        '23f72c8b9990d45cd8af63c7e5ba1ddf45c95f38c3974c742a013f41b6ddcb22',
        '9d65b9854d39f6832632e7b617fb78b98a988611dae79a7faa0cab1f8b5cbd6c',
        '60bfea033ff0323c31438b01ee214e3256e641748b89019004aa9651ec63233c',
        '3f7bded24f306f30ce044e0d7a76166e3ffe15b742a75f145a1c5edae52319eb',
        '2f381136c42911dbffcb88ee1a69524c59380232598019806151725fbb692c29',
        '7f291eeb07053eb2fa7010594ac289753c68120a2221ab78437f39220e92152c',
    ),
    'NVFP4': (
        '371c21610a5ac8a8ca933256b8a8386d0d94902f672b16889ae775cd81721bd4',
        '1d241ef38b4cede5ff79c8d617fdfed13a0525be674226505cdb83ee19c597d1',
        'db85b464885d7599cb6f7da55ded77d267a79fcd08a4c94f277ecd5a37c929a6',
        '476f9c2f5fb9bd5f6965ed68efc338cf31aef42757f239331e41fe2798be7316',
        '66cd3dc24644947e7b4d680cf8037280a8831ef0b53cecbd67121a16403bb956',
        '07dc5412f792fea8e4104909e70d4d6a1ca80381c7ec706180c2011a8ccb162b',
    ),
    'Complex': (
        'd3569db2d0b1c36a0b9ac8a4b7d40bbf4b67f2f67d4da55873b2e4c393aadc97',
        '7a8b8ac2adc573f0bc5854a8082fd6b735062cb89bf790a4b3b70d1f6f8b5763',
        '02e4d269b51f1df485eb6f3dbad93c2ae415dc07dcf9be949298eb5e9b518a5f',
        '9c604fbf3d19284cff44bf10144e2618504c06447ddb6c276c8247f4b1e6c251',
        '4c84bfdab214682fc1535a4e9e34a6200ed285219b2c37c264c156833205f486',
        '25ddb5e46f92d6b98799e9c9ad2ea4e60ac6b9aca876ef4d34fee946c1e4d053',
    ),
    'Float16': (
        'fb637d6ee6096831a15875f04b351cc4f983287292c17d2711818dc8a067a3e0',
        'a798b97ce61e5fe416cc88c5ba8114806d0ffc2d5db13c9c2edb90cccf261be5',
        '3ce121455b95847dc0f925bc6d47ef43f158e0e567b40126a3bdedd907909811',
        '122a75d15c8dd2d6c5a1cfd5f35cd1bb16de93a282b41ffd15f96f0be533e4ee',
        'b868a97e7d856f299819ff4821756f85897e38c54f3f37a0cdb5329c6f3ccd29',
        'dbdbd0db810ab2df05dcccd6839074d1951addb635153fb305a6bff4d023c719',
    ),
    'BFloat16': (
        '18225140f240cbb7f7d2a499cefae6921aeddd0a1b53e212fc4b125e58147828',
        '319ff6ab5b675607af6ff66185b3a2c618fdbde0981ec22c2fa3024f49013cd1',
        'e5095d3ca70d50408244295bc1220ac5beb1e63574e5e84f8b3700e888613650',
        'd3aa55d50f36eb51c56fbe8765ca1f38a5d8512908d9093b19cfd436363e454b',
        '8a3c5e6e0429c303d23c3917357f5e93faf97ed7ede8d96aea7a557fdde883ce',
        '53f1b980cd0dbea227a32489d1bdbd48df7302482c2ddd7ef2013aad2defc51a',
    ),
    'E4M3FNUZ': (
        '3a02d33da4330180b41aa68cd5cb295c9d00bdf115ceb4b18d36fcaa6e9e7ef5',
        'a3004e8227d79ada53983fa8c83ac025cf6a058a9e9973658dd631454615f05a',
        'e85d22415752c4cccb053141b5aedd6ec395000ce94d73bd2289dd169b76c958',
        '8e94604ea7f2296547e62a49f11b9ea625bfbf4ebb05f5f50a9359297f46908f',
        'b7d7dd6a2c645e7dd3ed01543f0f6009bdfcebfc19d4f563967ca05b6aaba655',
        '29fb9486bbc5c49ac4735e55fc6e420ed7af82847b6e48f3dc887aedce98d83e',
    ),
    'E5M2FNUZ': (
        'affec39e0f41761feb9122c8e32b4a2ea5e282cebb74df6388e89d64cd0ac283',
        '44d40227cfc4e3864d701eedbcdeaeafa62e0ca4d718bcce08aa570e162965da',
        'b69e956d5565641fad0248e93b4a5b5ed6dd4ffedccb1151132c627a91dd7d02',
        '56e34959ac93552184118274f4f3b45deae00edfadebf64f5bef24b7828f4807',
        'ddf926845a554991c652aacfa2e0316a60f7d1640a26835678cd2cd75906ae6e',
        '08de658ea6175f497f60a79cee05ea227051eebc842a96901c56ca5f6f0bfb8a',
    ),
    'Int16': (
        '6b7deb1e50de4633d739bdbd86c11149774bc78f22b5da1b7e28636d5ff83b66',
        'd1545477738dc7e8a74ff41a33f9e799ec2f2d6324ba386c4568c613ea7334f1',
        '1ffb62406e9e5c0c836784e303e9bea3fb4d78f6ee94a7dff9c4c089daa521d2',
        '52bb09bd2790688201e4ebc870bcc7ceb06e357f4d4b7953c73bc138687933fe',
        '84dca9bde850d635197260b31dcd0ec8f892a5b2850156d05e5588efe77c726a',
        '821e419aeef769f17631b3bbe808211a4dc9fdff49fd8dd2c8c4dfea9370445b',
    ),
    'Int64': (
        'a3d95c44a6b968bbbf7d9f6dc3cf680e9ce3ea3bb1d5cfbaafc926ff79fd8aea',
        'b2228386967d90a43102577c1a01b0c64dffbac440bfbde10786a5b800baf267',
        '157f8cee4bf22c78f4646655e47fd7938a0dc6e65c2d12ef745fe0c567c33140',
        'c5ae5e2bfe05fe5610a6286861b672c07c217a65df30aa161cc31a2153c77c38',
        '7423cf17d82773624fe21365675cc198bf2c44cfe10b3c0a2c7d0cef0b00c8fe',
        '721026751a452d509fda3004d7405a4f12010d5e303c52aa0d3af9e4eb9a5873',
    ),
    'Int4': (
        '64c76a90c79287d195673304728f6a0c0578528bbf1ecb6b0441dfe076b9b92c',
        '1a951f8504c506aea3314067e35813dedc948a3f0c3cf4bd6f7a69774e333573',
        '5a689491fb39ddda0c8768ebfaf04d334427764d347f095fb78a29660552815e',
        '48030734a4785c6e32c2b5c42c86abb1980ac01db4be6fe265b362e0552714ae',
        '4334e63d99c82b3de8f5433591edd5e5e7970f7c4257652cac0aaba58771d87f',
        '42dfedfc9b5872434ed14bb00761a6933d2fe5d725f42b0188989c003be27e48',
    ),
    'UInt8': (
        '48a0a689c13dfdd2aec9c68ebc54f02c76c6e0a178184cfe6929fb1e29955f86',
        '5b955c2917fcfffed5ffec0f28be2d6e39763ac8fd45264c5415121e42a370b3',
        '82bf90332cdf5197f4ac44b12bb1f3c8609453e9e7d4a57075f3c0d4cb9827f2',
        '880f60f2e8bd16c2525c781f1acd21ae43eadfc40250bb3b40bf26bd6f8fd0aa',
        'c6757be75981a4d447942fd14bd5d9906333b98e77abc26711119504017df722',
        'af0608857d38fd7b48ad31a67033aaccba3414d7ec158890dd3a705ac761ff5c',
    ),
    'UInt16': (
        '818f859961497bf4d6752371efd3a855d0b7c9828f3133622a7ec0f927f0356d',
        'a28c1cf4cb3d706207aa2f9122cd928f5edec15aea1af156b8cfdafc0939bd0a',
        '838b492a4e3b29148f51709adf916d814fab944e963a5965595ceca59ebb802e',
        '57db11c905cd9f56c89f143b132c384b88a52c910dbfc2884b40d5f5a0da92f9',
        '57e2121d6c106eab6b36395a8feb27bf846e7f6f5b69ec4b65541a48bdbc9ec2',
        'd028a2f02ec994639e0baa4e4aadd7688076d07c21505d2bca632c4d7702181a',
    ),
    'UInt32': (
        'e56a05423ae67f5716cc5aad9585a0b0f7f5a9dbe2e89cd769d5c05757f94baf',
        'c774412f5e9931976712b2da56bce71751e87057649105fb35c938d7ea7362ba',
        '66c61476223c4ccf1e3807d375848b26639763ffae67c121b6b39b39944061bc',
        '5fede1532ec16fa6ee37eac965cd228c54150d262104d962dc4823d7791243f5',
        '8b14de2633725d5faaa439233222e388372ee480fde72d60d552429680a051e4',
        '28e971a8f8845f91c6393710ba9b9eed23282bcda1619685716abc9c73825f52',
    ),
    'UInt64': (
        'c76bfd3addfdc4bea8d957a537c5738807d544c74fb566e5d9a72f913d861169',
        '56cb4e812b17cad059dce32a890a9055fdb590e131dd847a5d62b016fee53c0b',
        '96fb88ab3229730ef22219bf389b19da4849ba2ca80e19a1d81daf6698c7b9ba',
        'b0c9226713a251748d7ee3416eb842fd677a92523549b4ad88f0fa56f8a5d228',
        '168045337092bfad9123f1ae910da79f575e81d81bee11f348a67dcfdc51e344',
        'a89f77bfae102b65f8f4522984d615ee3bff02ec1b4402c51e0e18aec7f95d4e',
    ),
    'UInt4': (
        '8b691ae6fcd6cb8aa85745822b93b3b12c7add3ab3adb7247fb928b062a533de',
        'f5c3b04ac7a6abbde7b90f2a0866002c87658ce245942b610b36543603704c11',
        '05e6de06568649c3b611bbdf026c5bc49b68af00651ee35876400a822454a9b4',
        '67b2d43b51d10708392c2b9efabf8028744137eaad921c3eaa41936d435a608c',
        '2daae9cc6e62c04775166d2011ac3e86bb00eeee45be6f701113011e3b628be4',
        '8ab06658738fad5734ea5e84ab9c409f6fb533aa500885ad9c664f8c2932bafb',
    ),
    'Complex64': (
        '71721a88a221000e727c6281e1de9e741bee0e42efc1c3824a384662ed90b5d8',
        'ff63b307f88772b8d9c71b73e64c5e679001c6117c5964368a2676f2f1204c9f',
        'ee5f520b214e28d0c69e467aa3134b093eaae17f7753bb2740d5288cac1d0b81',
        'fff9f17b896e08a841e0b4559ab6c78ce716c3336e6feac576de4caf176749b0',
        '2bd6d3c9b25ec1cc03cfad1a46630f46399ce3ee5b28a361f6827ab4a01a6fd0',
        'f4637aca182bc9dca7500994c086f75560e88e7747b7e72068cbd24996dd0e8c',
    ),
    'Complex128': (
        '94b5295814545cbc149b8613db3647670aa041842c79118f2f17ba1eaf874eca',
        '014a65908a4b081398f98cf1119af694eeabe8f41e4c7ab9a7de2bcf94061e28',
        'e6e258685a814a8e65a90a5a59a856a6a027a26dda7242089ad47858e4a4f72a',
        'b6e67be33bc7516216a136e60294c2bfdeeb1dd77ee94ec63d71a68b8a119818',
        '7763ba985e696c015b63ad7b6a47b6f320b8eb55a7f593bfed823db5e273b6c8',
        '424b0b08538dd91a4c8f440bc1c3a51af07f7e92d88e8ed79f7fa6457bfca2d0',
    ),
}

#: name -> sha256 of repr(d.structure()).
STRUCTURES = {
    'Any': '04b261fbc6b6041d6f629c7b7e9111e8b733d5e37c36d132453856f5012fbb3b',
    'Floating': '3ec1408bd65fe036fee136a281aab19638fbdc4bbd865c33793b707fdd8bd079',
    'Integer': '3ec1408bd65fe036fee136a281aab19638fbdc4bbd865c33793b707fdd8bd079',
    'Bool': 'e087a838505159023cdb9765a72184e17eb4c2b8a512d1e75b126858f809205e',
    'Int32': 'ae23eb43249248b5f05e4992904843df5b3233b90673dc178d11bb2d5df075f8',
    'Int8': '3b9d88cb39c1246ebad0e207418b160ee533b79b534ca7538bbadc065498b330',
    'Float32': '3ba105d274a0d944ddb033bb316268e8a45c203ece7795fd18bedd396fac7d32',
    'Float64': '65a617bbfc608aaecc075c462e9917dd57c7579ce4ee25fc1e833f35457908a9',
    'E8M0': '6614ad6a4180ab9717ec1bbd08015e391fd4b412fe5f5a7d4b6c88b4f560b1fd',
    'E5M2': '6614ad6a4180ab9717ec1bbd08015e391fd4b412fe5f5a7d4b6c88b4f560b1fd',
    'E4M3': '6614ad6a4180ab9717ec1bbd08015e391fd4b412fe5f5a7d4b6c88b4f560b1fd',
    'E3M2': 'f0c433a958addb981ac36ee47fde050773ad30ac3a3b186667f30eef51413349',
    'E2M3': 'f0c433a958addb981ac36ee47fde050773ad30ac3a3b186667f30eef51413349',
    'E2M1': '0031931e167ca87991d7aa1af104731e97bc0f770fda650dfbf3d9b3fa8a3573',
    'MXFP8_E4M3': 'c6544bf9d2ebb6514f9f1a4ae8a5147d98fd061dfa12634c77d222c3745d95fe',
    'MXFP8_E5M2': 'b876050deb29c21837ce73020355a7bc122a7af537f9e57a899f7593ff828e3a',
    'MXFP6_E3M2': '48a114a2a46e3fa0473d2aa73caf85e2180a7abf11cb0bd3589cc0178c681dc1',
    'MXFP6_E2M3': 'b485b9cd2af2fd350ef17cb519ee2441271d869c43449592ab36b140caf7e01d',
    'MXFP4': 'fe4ae3541fbf6fbc0415c677c5a716942d28010ad786c95e25eee5d48a93f070',
    'MXINT8': '402d367068f8820d4e008559fa92b269978817723e6b500b6fda8341d0d8444a',
    'NVFP4': '451e085faadfa8c6b27e46589c5ff6fcb51be60caadaa69b54f0907d3209e9fa',
    'Complex': '3ec1408bd65fe036fee136a281aab19638fbdc4bbd865c33793b707fdd8bd079',
    'Float16': '293323b28415cdac3238e84642573070e6839e794f548a0e91dc22ec2200068a',
    'BFloat16': '293323b28415cdac3238e84642573070e6839e794f548a0e91dc22ec2200068a',
    'E4M3FNUZ': '6614ad6a4180ab9717ec1bbd08015e391fd4b412fe5f5a7d4b6c88b4f560b1fd',
    'E5M2FNUZ': '6614ad6a4180ab9717ec1bbd08015e391fd4b412fe5f5a7d4b6c88b4f560b1fd',
    'Int16': '8d485ebbefdf85fb5ec91a2c8d8f1b5e974f8405f0fc361151aa4962ed0703f3',
    'Int64': '9277c34d4957c3b708d870869200cfbc79468ab26344049102d9677c07e0dc38',
    'Int4': 'c3a0290ba202fc58e6dd39b502c069a7117236fa75277ff656411fdd6d89dc3f',
    'UInt8': '3b9d88cb39c1246ebad0e207418b160ee533b79b534ca7538bbadc065498b330',
    'UInt16': '8d485ebbefdf85fb5ec91a2c8d8f1b5e974f8405f0fc361151aa4962ed0703f3',
    'UInt32': 'ae23eb43249248b5f05e4992904843df5b3233b90673dc178d11bb2d5df075f8',
    'UInt64': '9277c34d4957c3b708d870869200cfbc79468ab26344049102d9677c07e0dc38',
    'UInt4': 'c3a0290ba202fc58e6dd39b502c069a7117236fa75277ff656411fdd6d89dc3f',
    'Complex64': '012e3860e2893f663bdef8c7bbca34002f7e25c2a799063e6b00fa08cac0f7ea',
    'Complex128': '3c730a3021c8a19e39b288e2e6523d8d318199c15dc74eb401ecd439d11ae0ad',
}
